import type { DocReader } from '../projection.js';
import { type ResultCacheDoc, resultCacheProjection } from './resultCache.js';

export const resultCacheQueries = (docs: DocReader) => ({
  byCacheKey: (cacheKey: string) => docs.get<ResultCacheDoc>(resultCacheProjection.name, cacheKey),
});
