import Database from 'better-sqlite3';
import t from 'tap';
import { boundPageCache, PAGE_CACHE_KIB } from '../../services/sqlitePageCache.js';

/**
 * Each SQLite connection the service keeps open caches at most 2,000 KiB of pages (docs/decisions.md#memory), not the
 * 16,000 KiB better-sqlite3 builds in: ~26 MB of a crawler's peak memory.
 */
t.test('sqlite page cache › bounded to SQLite’s own default', async (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  const before = db.pragma('cache_size', { simple: true }) as number;
  boundPageCache(db);
  t.equal(
    db.pragma('cache_size', { simple: true }),
    -PAGE_CACHE_KIB,
    `cache_size -${PAGE_CACHE_KIB} (KiB), from ${before}`,
  );
});
