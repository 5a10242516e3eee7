import { depthOf, MAX_DEPTH } from '../../contracts/search.js';
import type { Projection } from '../projection.js';

/** One completed crawl that may answer later searches with its cache key. */
export interface ResultCacheEntry {
  jobId: string;
  completedAt: string;
  /**
   * the deepest search it answers: its crawl's depth, or the top 100 when the crawl ended before its depth did
   * (Google's last page, or stop_domain found: a deeper crawl would have got the same)
   */
  covers: number;
}

/**
 * cache key → the crawls that completed `done` for it and may still answer (docs/depth.md). Depth is not part of the
 * key: a deep result answers a shallower search, never the other way round. An entry that is both older and no
 * deeper than a newer one can never be the better answer, so it is dropped: what stays runs from old and deep to new
 * and shallow, a few entries at most. Freshness (SERP_CACHE_TTL_S) is judged at read time.
 */
export interface ResultCacheDoc {
  cacheKey: string;
  entries: ResultCacheEntry[];
}

export const resultCacheProjection: Projection<ResultCacheDoc> = {
  name: 'resultCache',
  idOf: (e) =>
    (e.type === 'CrawlCompleted' && e.data.status === 'done') || e.type === 'SearchPurged'
      ? e.data.cacheKey || undefined
      : undefined,
  evolve(doc, e) {
    if (e.type === 'SearchPurged') {
      // a purged job answers no one from cache
      const entries = (doc?.entries ?? []).filter((x) => x.jobId !== e.data.jobId);
      return doc && entries.length > 0 ? { ...doc, entries } : null;
    }
    if (e.type !== 'CrawlCompleted') return doc ?? null;
    const covers = e.data.exhausted ? MAX_DEPTH : depthOf(e.data);
    const kept = (doc?.entries ?? []).filter((x) => x.covers > covers);
    return {
      cacheKey: e.data.cacheKey,
      entries: [...kept, { jobId: e.data.jobId, completedAt: e.data.completedAt, covers }],
    };
  },
};

const isFresh = (entry: ResultCacheEntry, now: Date, ttlSeconds: number) =>
  now.getTime() - Date.parse(entry.completedAt) < ttlSeconds * 1000;

/** The newest fresh entry deep enough for a search of `depth`, if any. */
export const cachedAnswer = (
  doc: ResultCacheDoc,
  depth: number,
  now: Date,
  ttlSeconds: number,
): ResultCacheEntry | undefined => {
  let best: ResultCacheEntry | undefined;
  for (const entry of doc.entries) {
    if (entry.covers < depth || !isFresh(entry, now, ttlSeconds)) continue;
    if (!best || entry.completedAt > best.completedAt) best = entry;
  }
  return best;
};
