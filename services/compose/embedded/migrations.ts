import Database from 'better-sqlite3';
import type { ParsedSerp } from '../../../contracts/result.js';
import { putResult, resultBlobKey } from '../../answers/resultBlobs.js';
import type { BlobStore } from '../../ports/blobStore.js';

const RESULTS_OUT_OF_EVENTS = 'results-out-of-events';

/**
 * One-time migration of an embedded data directory (docs/operations.md#the-data-directory): `CrawlCompleted` and
 * `SearchReparsed` recorded before results moved to the blob store carry the result inline, where retention could never
 * delete it. Each such event's result is written to the blob store under the key a new crawl would use, then the
 * event's `result` is replaced by the blob's reference (`resultRef`, with its SHA-256): the event says the same thing,
 * by reference. Blob first, then the row: a crash in between leaves an inline result and a blob that the next run
 * writes again. Done once per events file (a marker row), then the file is VACUUMed so the space comes back. Runs
 * before the projector starts.
 */
export const moveInlineResults = async (eventsPath: string, blobStore: BlobStore) => {
  const db = new Database(eventsPath, { timeout: 5000 });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, done_at TEXT NOT NULL)');
    const done = db.prepare('SELECT 1 FROM migrations WHERE name = ?').get(RESULTS_OUT_OF_EVENTS);
    if (done) return { moved: 0 };
    const select = db.prepare<[number], { global_position: number; type: string; data: string }>(
      `SELECT global_position, type, data FROM events WHERE global_position > ?
         AND type IN ('CrawlCompleted', 'SearchReparsed') AND json_type(data, '$.result') IS NOT NULL
       ORDER BY global_position LIMIT 200`,
    );
    const update = db.prepare<[string, number]>('UPDATE events SET data = ? WHERE global_position = ?');
    let moved = 0;
    let from = 0;
    for (;;) {
      const rows = select.all(from);
      if (rows.length === 0) break;
      const updates: Array<[string, number]> = [];
      for (const row of rows) {
        const { result, ...rest } = JSON.parse(row.data) as { jobId: string; result: ParsedSerp; reparsedAt?: string };
        const key = resultBlobKey(rest.jobId, row.type === 'SearchReparsed' ? rest.reparsedAt : undefined);
        const resultRef = await putResult(blobStore, key, result);
        updates.push([JSON.stringify({ ...rest, resultRef }), row.global_position]);
      }
      db.transaction(() => {
        for (const u of updates) update.run(...u);
      })();
      moved += rows.length;
      from = rows[rows.length - 1].global_position;
    }
    db.prepare('INSERT INTO migrations (name, done_at) VALUES (?, ?)').run(
      RESULTS_OUT_OF_EVENTS,
      new Date().toISOString(),
    );
    if (moved > 0) {
      db.exec('VACUUM');
      db.pragma('wal_checkpoint(TRUNCATE)');
    }
    return { moved };
  } finally {
    db.close();
  }
};
