import Database from 'better-sqlite3';
import {
  type AppendResult,
  type EventStore,
  type ExpectedVersion,
  type RecordedEvent,
  type Subscription,
  WrongExpectedVersionError,
} from '../../ports/eventStore.js';
import { boundPageCache } from '../../sqlitePageCache.js';
import { startCatchUpSubscription } from './catchUpSubscription.js';
import { type EncodedEvent, encode, fromEncoded, toRecordedEvent } from './sqliteCodec.js';

export { CorruptEventError } from './sqliteCodec.js';

export interface SqliteEventStoreOptions {
  /** database file, created with its schema when missing; several processes may open the same file */
  path: string;
  /** how often a live subscription re-reads the file to see appends made by other processes (default 200) */
  pollIntervalMs?: number;
  /** most events handed to a subscription handler at once (default 500) */
  batchSize?: number;
  /** how long a commit waits for another process holding the write lock before failing (default 5000) */
  busyTimeoutMs?: number;
  /** a subscription read or handler failed; the batch is retried after `pollIntervalMs` (default: stderr) */
  onSubscriptionError?: (error: unknown) => void;
  /** most events this process keeps of its own latest commits for its subscriptions (default 4096; 0 = none) */
  tailSize?: number;
}

/** counters for tests and benchmarks: `appends / commits` is the group-commit ratio */
export interface SqliteEventStoreStats {
  appends: number;
  commits: number;
  /** subscription reads answered from this process's own latest commits, and those that read the file */
  tailReads: number;
  fileReads: number;
}

export type SqliteEventStore = EventStore & { stats(): SqliteEventStoreStats };

export class EventStoreClosedError extends Error {
  readonly code = 'SERP_EVENTSTORE_CLOSED';
  constructor() {
    super('event store is closed');
    this.name = 'EventStoreClosedError';
  }
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  global_position INTEGER PRIMARY KEY,
  stream TEXT NOT NULL,
  version INTEGER NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL CHECK (json_valid(data)),
  metadata TEXT NOT NULL CHECK (json_valid(metadata)),
  UNIQUE (stream, version)
)`;

const versionMatches = (expected: ExpectedVersion, current: number) =>
  expected === 'any' ||
  (expected === 'no_stream' && current === -1) ||
  (expected === 'stream_exists' && current >= 0) ||
  expected === current;

interface PendingAppend {
  stream: string;
  events: EncodedEvent[];
  expected: ExpectedVersion;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

/**
 * The embedded event store: one SQLite file in WAL mode with `synchronous=FULL`, so a COMMIT returns only after fsync.
 *
 * Group commit: appends made in the same turn of the event loop are queued and written by one transaction (one
 * fsync). Each append runs inside its own SAVEPOINT and checks its own expected version against what is in the file
 * plus what earlier appends of the same batch wrote, so a conflicting append fails alone. No append resolves before
 * the COMMIT returned: an acknowledged append is durable.
 */
export const createSqliteEventStore = (options: SqliteEventStoreOptions): SqliteEventStore => {
  const pollIntervalMs = options.pollIntervalMs ?? 200;
  const batchSize = options.batchSize ?? 500;
  const onSubscriptionError =
    options.onSubscriptionError ??
    ((error: unknown) => process.stderr.write(`event store subscription: ${String(error)}\n`));

  const db = new Database(options.path, { timeout: options.busyTimeoutMs ?? 5000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  boundPageCache(db);
  db.exec(SCHEMA);

  const currentVersion = db.prepare<[string], { v: number | null }>(
    'SELECT MAX(version) AS v FROM events WHERE stream = ?',
  );
  const head = db.prepare<[], { p: number | null }>('SELECT MAX(global_position) AS p FROM events');
  const insert = db.prepare<[string, number, string, string, string]>(
    'INSERT INTO events (stream, version, type, data, metadata) VALUES (?, ?, ?, ?, ?)',
  );
  const selectStream = db.prepare<[string, number, number]>(
    'SELECT * FROM events WHERE stream = ? AND version >= ? ORDER BY version LIMIT ?',
  );
  const selectAll = db.prepare<[number, number]>(
    'SELECT * FROM events WHERE global_position > ? ORDER BY global_position LIMIT ?',
  );
  const readStreamTx = db.transaction((stream: string, fromVersion: number, maxCount: number) => ({
    rows: selectStream.all(stream, fromVersion, maxCount),
    current: currentVersion.get(stream)?.v ?? -1,
  }));

  const stats: SqliteEventStoreStats = { appends: 0, commits: 0, tailReads: 0, fileReads: 0 };

  /**
   * The events of this process's latest commits, in global order and without a gap, for its subscriptions (the
   * projector and the dispatcher read every event back right after it is committed). A commit's positions are
   * contiguous (BEGIN IMMEDIATE holds the file's write lock), so a commit that does not start right after the tail's
   * last event means another process wrote in between: the tail restarts there, and a subscription behind it reads
   * the file. Whatever the tail cannot answer whole is read from the file, as before.
   */
  const tailSize = options.tailSize ?? 4096;
  let tail: RecordedEvent[] = [];
  const remember = (committed: RecordedEvent[]) => {
    if (tailSize === 0 || committed.length === 0) return;
    const last = tail[tail.length - 1];
    if (!last || committed[0]!.globalPosition !== last.globalPosition + 1) tail = [];
    for (const e of committed) tail.push(e);
    if (tail.length > tailSize * 2) tail = tail.slice(tail.length - tailSize);
  };
  const appendListeners = new Set<() => void>();
  const subscriptions = new Set<Subscription>();
  let queue: PendingAppend[] = [];
  let flushScheduled = false;
  let closing: Promise<void> | undefined;
  let acceptingAppends = true;

  // prepared once: exec() would compile these five statements again on every append (a tenth of a submit's time)
  const savepoint = db.prepare('SAVEPOINT append');
  const release = db.prepare('RELEASE append');
  const rollbackTo = db.prepare('ROLLBACK TO append');
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');

  const applyOne = (append: PendingAppend, committed: RecordedEvent[]): AppendResult => {
    savepoint.run();
    try {
      const current = currentVersion.get(append.stream)?.v ?? -1;
      if (!versionMatches(append.expected, current)) {
        throw new WrongExpectedVersionError(append.stream, append.expected, current);
      }
      // an empty append only checks the version; it reports the head so the result stays a valid checkpoint
      let lastGlobalPosition = append.events.length === 0 ? (head.get()?.p ?? 0) : 0;
      const recorded: RecordedEvent[] = [];
      append.events.forEach((event, i) => {
        const info = insert.run(append.stream, current + 1 + i, event.type, event.data, event.metadata);
        lastGlobalPosition = Number(info.lastInsertRowid);
        if (tailSize > 0) recorded.push(fromEncoded(event, append.stream, current + 1 + i, lastGlobalPosition));
      });
      release.run();
      for (const e of recorded) committed.push(e);
      return { nextExpectedVersion: current + append.events.length, lastGlobalPosition };
    } catch (error) {
      rollbackTo.run();
      release.run();
      throw error;
    }
  };

  const flush = () => {
    flushScheduled = false;
    const batch = queue;
    queue = [];
    if (batch.length === 0) return;
    const outcomes: Array<{ ok: true; value: AppendResult } | { ok: false; error: unknown }> = [];
    const committed: RecordedEvent[] = [];
    try {
      // IMMEDIATE takes the write lock up front, so the version checks below see every other process's commits.
      begin.run();
      try {
        for (const append of batch) {
          try {
            outcomes.push({ ok: true, value: applyOne(append, committed) });
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
    } catch (error) {
      for (const append of batch) append.reject(error);
      return;
    }
    stats.commits += 1;
    stats.appends += batch.length;
    remember(committed);
    batch.forEach((append, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) append.resolve(outcome.value);
      else append.reject(outcome.error);
    });
    for (const wake of appendListeners) wake();
  };

  const readAfter = (fromPosition: number, maxCount: number) =>
    selectAll.all(fromPosition, maxCount).map(toRecordedEvent);

  /** a subscription's next batch: from the tail when it holds the very next event, else from the file */
  const readNext = (fromPosition: number, maxCount: number): RecordedEvent[] => {
    const first = tail[0];
    if (first && fromPosition + 1 >= first.globalPosition) {
      const at = fromPosition + 1 - first.globalPosition;
      if (at < tail.length) {
        stats.tailReads += 1;
        return tail.slice(at, at + maxCount);
      }
    }
    stats.fileReads += 1;
    return readAfter(fromPosition, maxCount);
  };

  const store: SqliteEventStore = {
    appendToStream(stream, events, appendOptions) {
      if (!acceptingAppends) return Promise.reject(new EventStoreClosedError());
      let encoded: EncodedEvent[];
      try {
        encoded = events.map(encode);
      } catch (error) {
        return Promise.reject(error);
      }
      return new Promise<AppendResult>((resolve, reject) => {
        queue.push({ stream, events: encoded, expected: appendOptions?.expectedVersion ?? 'any', resolve, reject });
        if (!flushScheduled) {
          flushScheduled = true;
          // setImmediate runs after every promise continuation of this turn: concurrent callers share the commit.
          setImmediate(flush);
        }
      });
    },

    async readStream(stream, readOptions) {
      const { rows, current } = readStreamTx(stream, readOptions?.fromVersion ?? 0, readOptions?.maxCount ?? -1);
      return { events: rows.map(toRecordedEvent), currentVersion: current };
    },

    async readAll(readOptions) {
      return readAfter(readOptions?.fromPosition ?? 0, readOptions?.maxCount ?? -1);
    },

    subscribeToAll(fromPosition, handler) {
      if (closing) throw new EventStoreClosedError();
      const subscription = startCatchUpSubscription({
        fromPosition,
        handler,
        readAfter: async (position) => readNext(position, batchSize),
        onAppended: (wake) => {
          appendListeners.add(wake);
          return () => appendListeners.delete(wake);
        },
        pollIntervalMs,
        onError: onSubscriptionError,
      });
      subscriptions.add(subscription);
      return {
        async stop() {
          await subscription.stop();
          subscriptions.delete(subscription);
        },
      };
    },

    async headPosition() {
      return head.get()?.p ?? 0;
    },

    close() {
      closing ??= (async () => {
        // Handlers in flight may still append (a projector recording a follow-up), so stop them before refusing appends.
        await Promise.all([...subscriptions].map((s) => s.stop()));
        acceptingAppends = false;
        flush();
        db.close();
      })();
      return closing;
    },

    stats: () => ({ ...stats }),
  };
  return store;
};
