import Database, { type Statement } from 'better-sqlite3';
import { serialiseDoc } from '../../knownJson.js';
import type { DocWrite, ReadModelStore } from '../../ports/readModelStore.js';
import { boundPageCache } from '../../sqlitePageCache.js';

/** Read models as JSON documents in one SQLite file (WAL), checkpoints beside them (see the port). */
export const createSqliteReadModelStore = (path: string): ReadModelStore => {
  const db = new Database(path);
  // set before the first table: a new file gives pages back on `compact()`; older files are VACUUMed once there
  db.pragma('auto_vacuum = INCREMENTAL');
  boundPageCache(db);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`
    CREATE TABLE IF NOT EXISTS docs (view TEXT NOT NULL, id TEXT NOT NULL, doc TEXT NOT NULL, lookup TEXT,
      PRIMARY KEY (view, id)) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS docs_lookup ON docs (view, lookup) WHERE lookup IS NOT NULL;
    CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, position INTEGER NOT NULL);
  `);
  const getStmt = db.prepare<[string, string], { doc: string }>('SELECT doc FROM docs WHERE view = ? AND id = ?');
  const hasStmt = db.prepare<[string, string], number>('SELECT 1 FROM docs WHERE view = ? AND id = ?').pluck();
  const lookupStmt = db.prepare<[string, string], { doc: string }>(
    'SELECT doc FROM docs WHERE view = ? AND lookup = ? LIMIT 1',
  );
  const listStmt = db.prepare<[string], { doc: string }>('SELECT doc FROM docs WHERE view = ? ORDER BY id');
  const listLookupStmt = db.prepare<[string, string], { doc: string }>(
    'SELECT doc FROM docs WHERE view = ? AND lookup = ? ORDER BY id',
  );
  const listLookupLastStmt = db.prepare<[string, string, number], { doc: string }>(
    'SELECT doc FROM docs WHERE view = ? AND lookup = ? ORDER BY id DESC LIMIT ?',
  );
  /**
   * A lookup's documents filtered on their fields, newest first up to `last`, then in id order: one statement per
   * shape of filter, kept. The lookup index holds the id (the table's key), so the walk from the newest stops at
   * `last` matches.
   */
  const filtered = new Map<string, Statement<unknown[], { doc: string }>>();
  const filteredLookup = (
    view: string,
    lookup: string,
    options: { last?: number; equal?: Record<string, string>; atLeast?: Record<string, string> },
  ) => {
    const equal = Object.entries(options.equal ?? {});
    const atLeast = Object.entries(options.atLeast ?? {});
    const fields = [...equal, ...atLeast].map(([f]) => f);
    if (fields.some((f) => !/^[A-Za-z][A-Za-z0-9_]*$/.test(f)))
      throw new Error(`not a field name: ${fields.join(', ')}`);
    const shape = `${equal.map(([f]) => f).join(',')}|${atLeast.map(([f]) => f).join(',')}`;
    let stmt = filtered.get(shape);
    if (!stmt) {
      const where = [
        ...equal.map(([f]) => `json_extract(doc, '$.${f}') = ?`),
        ...atLeast.map(([f]) => `json_extract(doc, '$.${f}') >= ?`),
      ];
      stmt = db.prepare<unknown[], { doc: string }>(
        `SELECT doc FROM docs WHERE view = ? AND lookup = ? AND ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`,
      );
      filtered.set(shape, stmt);
    }
    const values = [...equal.map(([, v]) => v), ...atLeast.map(([, v]) => v)];
    return stmt.all(view, lookup, ...values, options.last ?? -1).reverse();
  };
  const listBetweenStmt = db.prepare<[string, string, string, number], { doc: string }>(
    'SELECT doc FROM docs WHERE view = ? AND id > ? AND id < ? ORDER BY id LIMIT ?',
  );
  const putStmt = db.prepare('INSERT OR REPLACE INTO docs (view, id, doc, lookup) VALUES (?, ?, ?, ?)');
  const delStmt = db.prepare('DELETE FROM docs WHERE view = ? AND id = ?');
  const cpGet = db.prepare<[string], { position: number }>('SELECT position FROM checkpoints WHERE name = ?');
  const cpPut = db.prepare('INSERT OR REPLACE INTO checkpoints (name, position) VALUES (?, ?)');
  /**
   * Documents found by lookup (an API key by its HMAC, read on every request), kept until anything could have changed
   * them: a commit here that writes their view, or a commit by another connection to this file (`data_version` moves
   * then). Both are seen before the next lookup, so a revoked key is refused as soon as its revocation is projected,
   * as without the cache. Shared between callers, so frozen.
   */
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  let seenDataVersion = dataVersion.get();
  const byLookup = new Map<string, unknown>();
  const cachedViews = new Set<string>();
  const forget = (writes?: DocWrite[]) => {
    if (byLookup.size === 0) return;
    if (!writes || writes.some((w) => cachedViews.has(w.view))) byLookup.clear();
  };
  /**
   * Documents this process has just written that embed a result it made (a finished job's, ~100–700 kB): the next
   * `get` of the same document takes the object instead of reading back and parsing its text (the first poll of a
   * finished job did that on the event loop, ~1.3 MB of strings and objects a job, and each big string went straight
   * to the old generation, bringing the next full collection closer). Taken once, bounded, and dropped when another
   * connection commits to the file or this one writes the document again, so what a `get` returns is what the file
   * holds. Readers treat documents as read-only, so a shared object is safe. Held weakly: a document nobody reads
   * soon (html polls never read it) goes with the next collection instead of keeping a result's objects alive (16
   * held strongly cost the crawler ~40 MB of peak RSS).
   */
  const justWritten = new Map<string, WeakRef<object>>();
  const JUST_WRITTEN_MAX = 16;
  const docKey = (view: string, id: string) => `${view}\u0000${id}`;
  const commitTx = db.transaction((writes: DocWrite[], name: string, position: number) => {
    for (const w of writes) {
      const key = docKey(w.view, w.id);
      justWritten.delete(key);
      if (w.doc === null) {
        delStmt.run(w.view, w.id);
        continue;
      }
      const { json, spliced } = serialiseDoc(w.doc);
      putStmt.run(w.view, w.id, json, w.lookup ?? null);
      if (spliced) {
        justWritten.set(key, new WeakRef(w.doc as object));
        if (justWritten.size > JUST_WRITTEN_MAX) justWritten.delete(justWritten.keys().next().value as string);
      }
    }
    cpPut.run(name, position);
  });
  /** another connection committed since this one last looked: nothing kept from before may be handed out */
  const sawOtherCommits = () => {
    const version = dataVersion.get();
    if (version === seenDataVersion) return false;
    seenDataVersion = version;
    byLookup.clear();
    justWritten.clear();
    return true;
  };
  const takeJustWritten = (view: string, id: string) => {
    if (justWritten.size === 0 || sawOtherCommits()) return undefined;
    const key = docKey(view, id);
    const doc = justWritten.get(key)?.deref();
    justWritten.delete(key);
    return doc;
  };
  // one transaction wrapper for every exclusive() call (db.transaction(fn) per call builds a new one each time)
  const exclusiveTx = db.transaction(<T>(fn: () => T) => fn());
  const parse = <T>(row: { doc: string } | undefined) => (row ? (JSON.parse(row.doc) as T) : undefined);

  return {
    get: <T>(view: string, id: string) =>
      (takeJustWritten(view, id) as T | undefined) ?? parse<T>(getStmt.get(view, id)),
    has: (view, id) => hasStmt.get(view, id) !== undefined,
    findByLookup<T>(view: string, lookup: string) {
      sawOtherCommits();
      const key = `${view}\u0000${lookup}`;
      const hit = byLookup.get(key);
      if (hit !== undefined) return hit as T;
      const doc = parse<T>(lookupStmt.get(view, lookup));
      if (doc !== undefined) {
        if (byLookup.size >= 10_000) byLookup.clear();
        cachedViews.add(view);
        byLookup.set(key, Object.freeze(doc));
      }
      return doc;
    },
    list: <T>(view: string) => listStmt.all(view).map((r) => JSON.parse(r.doc) as T),
    listByLookup: <T>(
      view: string,
      lookup: string,
      options?: { last?: number; equal?: Record<string, string>; atLeast?: Record<string, string> },
    ) => {
      const filters = Object.keys(options?.equal ?? {}).length + Object.keys(options?.atLeast ?? {}).length;
      if (options && filters > 0) return filteredLookup(view, lookup, options).map((r) => JSON.parse(r.doc) as T);
      return (
        options?.last === undefined
          ? listLookupStmt.all(view, lookup)
          : listLookupLastStmt.all(view, lookup, options.last).reverse()
      ).map((r) => JSON.parse(r.doc) as T);
    },
    listBetween: <T>(view: string, after: string, before: string, limit: number) =>
      listBetweenStmt.all(view, after, before, limit).map((r) => JSON.parse(r.doc) as T),
    commit(writes, name, position) {
      try {
        commitTx(writes, name, position);
      } catch (err) {
        // rolled back: nothing it remembered was written
        for (const w of writes) justWritten.delete(docKey(w.view, w.id));
        throw err;
      } finally {
        forget(writes);
      }
    },
    exclusive: <T>(fn: () => T) => {
      try {
        return exclusiveTx.immediate(fn) as T;
      } catch (err) {
        // a commit inside may have remembered documents the rollback took back
        justWritten.clear();
        throw err;
      }
    },
    checkpoint: (name) => cpGet.get(name)?.position ?? 0,
    dump: () =>
      db
        .prepare<[], { view: string; id: string; doc: string }>('SELECT view, id, doc FROM docs ORDER BY view, id')
        .all(),
    reset(names) {
      forget();
      justWritten.clear();
      db.transaction(() => {
        db.exec('DELETE FROM docs');
        for (const n of names) db.prepare('DELETE FROM checkpoints WHERE name = ?').run(n);
      })();
    },
    compact() {
      if (db.pragma('auto_vacuum', { simple: true }) !== 2) db.exec('VACUUM');
      else db.pragma('incremental_vacuum');
      db.pragma('wal_checkpoint(TRUNCATE)');
    },
    close: () => db.close(),
  };
};
