import { apiKeysProjection } from './apiKeys/apiKeys.js';
import { jobStatusProjection } from './jobStatus/jobStatus.js';
import type { Projection } from './projection.js';
import { resultCacheProjection } from './resultCache/resultCache.js';
import { searchResultsProjection } from './searchResults/searchResults.js';
import { usageCountersProjection } from './usageCounters/usageCounters.js';

/** Every read model the api serves, in the order the projector applies them. */
export const allProjections: readonly Projection<unknown>[] = [
  jobStatusProjection,
  searchResultsProjection,
  usageCountersProjection,
  apiKeysProjection,
  resultCacheProjection,
] as Projection<unknown>[];
