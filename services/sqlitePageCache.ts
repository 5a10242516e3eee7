import type Database from 'better-sqlite3';

/**
 * The page cache of each SQLite connection the service keeps open (event store, read models): SQLite's own default
 * of 2,000 KiB, not the 16,000 KiB better-sqlite3 builds in. The service writes results of ~0.5–1 MB per finished
 * search through these connections, so under a crawl both caches filled to their 16 MB, malloc'd on the event loop's
 * thread and kept (docs/decisions.md#memory: ~26 MB of the crawler's peak RSS). 2 MB still holds the indexes' upper
 * pages and a few whole results; a read past it finds the result's pages in the OS's file cache.
 */
export const PAGE_CACHE_KIB = 2_000;

export const boundPageCache = (db: Database.Database): void => {
  db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
};
