import type { Projection } from '../projection.js';

/** cache key → the last job that completed `done` for it. Freshness (SERP_CACHE_TTL_S) is judged at read time. */
export interface ResultCacheDoc {
  cacheKey: string;
  jobId: string;
  completedAt: string;
}

export const resultCacheProjection: Projection<ResultCacheDoc> = {
  name: 'resultCache',
  idOf: (e) =>
    (e.type === 'CrawlCompleted' && e.data.status === 'done') || e.type === 'SearchPurged'
      ? e.data.cacheKey || undefined
      : undefined,
  evolve(doc, e) {
    // a purged job answers no one from cache
    if (e.type === 'SearchPurged') return doc && doc.jobId !== e.data.jobId ? doc : null;
    if (e.type !== 'CrawlCompleted') return doc ?? null;
    return { cacheKey: e.data.cacheKey, jobId: e.data.jobId, completedAt: e.data.completedAt };
  },
};

export const isFresh = (doc: ResultCacheDoc, now: Date, ttlSeconds: number) =>
  now.getTime() - Date.parse(doc.completedAt) < ttlSeconds * 1000;
