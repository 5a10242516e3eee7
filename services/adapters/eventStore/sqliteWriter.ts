import Database from 'better-sqlite3';
import {
  type AppendResult,
  type ExpectedVersion,
  expectedVersionMatches,
  WrongExpectedVersionError,
} from '../../ports/eventStore.js';
import { boundPageCache } from '../../sqlitePageCache.js';
import type { EncodedEvent } from './sqliteCodec.js';

/** one append of a group commit, its events already serialised */
export interface WriteRequest {
  stream: string;
  events: EncodedEvent[];
  expected: ExpectedVersion;
}

export type WriteOutcome = { ok: true; value: AppendResult } | { ok: false; error: unknown };

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  global_position INTEGER PRIMARY KEY,
  stream TEXT NOT NULL,
  version INTEGER NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL CHECK (json_valid(data)),
  metadata TEXT NOT NULL CHECK (json_valid(metadata)),
  UNIQUE (stream, version)
)`;

/** a connection to the events file as both sides open it: WAL, fsync on every COMMIT, the bounded page cache */
export const openEventsFile = (path: string, busyTimeoutMs: number): Database.Database => {
  const db = new Database(path, { timeout: busyTimeoutMs });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  boundPageCache(db);
  return db;
};

/**
 * The writing side of the embedded event store: one transaction (one fsync) per group of appends. Each append runs
 * inside its own SAVEPOINT and checks its own expected version against what is in the file plus what earlier appends
 * of the same group wrote, so a conflicting append fails alone. `write` returns only after COMMIT returned, and throws
 * when the group as a whole failed (nothing of it is written then).
 */
export interface SqliteWriter {
  write(batch: WriteRequest[]): WriteOutcome[];
  close(): void;
}

export const createSqliteWriter = (path: string, busyTimeoutMs: number): SqliteWriter => {
  const db = openEventsFile(path, busyTimeoutMs);
  db.exec(SCHEMA);
  const currentVersion = db.prepare<[string], { v: number | null }>(
    'SELECT MAX(version) AS v FROM events WHERE stream = ?',
  );
  const head = db.prepare<[], { p: number | null }>('SELECT MAX(global_position) AS p FROM events');
  const insert = db.prepare<[string, number, string, string, string]>(
    'INSERT INTO events (stream, version, type, data, metadata) VALUES (?, ?, ?, ?, ?)',
  );
  // prepared once: exec() would compile these five statements again on every append (a tenth of a submit's time)
  const savepoint = db.prepare('SAVEPOINT append');
  const release = db.prepare('RELEASE append');
  const rollbackTo = db.prepare('ROLLBACK TO append');
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');

  const applyOne = (append: WriteRequest): AppendResult => {
    savepoint.run();
    try {
      const current = currentVersion.get(append.stream)?.v ?? -1;
      if (!expectedVersionMatches(append.expected, current)) {
        throw new WrongExpectedVersionError(append.stream, append.expected, current);
      }
      // an empty append only checks the version; it reports the head so the result stays a valid checkpoint
      let lastGlobalPosition = append.events.length === 0 ? (head.get()?.p ?? 0) : 0;
      append.events.forEach((event, i) => {
        const info = insert.run(append.stream, current + 1 + i, event.type, event.data, event.metadata);
        lastGlobalPosition = Number(info.lastInsertRowid);
      });
      release.run();
      return { nextExpectedVersion: current + append.events.length, lastGlobalPosition };
    } catch (error) {
      rollbackTo.run();
      release.run();
      throw error;
    }
  };

  return {
    write(batch: WriteRequest[]): WriteOutcome[] {
      const outcomes: WriteOutcome[] = [];
      // IMMEDIATE takes the write lock up front, so the version checks below see every other process's commits.
      begin.run();
      try {
        for (const append of batch) {
          try {
            outcomes.push({ ok: true, value: applyOne(append) });
          } catch (error) {
            // SQLite ends the whole transaction on some errors (disk full, I/O): then nothing of the batch is
            // written, and carrying on would run the next appends outside it, so the batch fails as one.
            if (!db.inTransaction) throw error;
            outcomes.push({ ok: false, error });
          }
        }
        commit.run();
      } catch (error) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw error;
      }
      return outcomes;
    },
    close() {
      db.close();
    },
  };
};
