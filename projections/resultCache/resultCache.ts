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
    e.type === 'CrawlCompleted' && e.data.status === 'done' && e.data.cacheKey ? e.data.cacheKey : undefined,
  evolve(doc, e) {
    if (e.type !== 'CrawlCompleted') return doc ?? null;
    return { cacheKey: e.data.cacheKey, jobId: e.data.jobId, completedAt: e.data.completedAt };
  },
};

export const isFresh = (doc: ResultCacheDoc, now: Date, ttlSeconds: number) =>
  now.getTime() - Date.parse(doc.completedAt) < ttlSeconds * 1000;
