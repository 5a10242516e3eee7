import type { DocReader } from '../projection.js';
import { type SearchResultDoc, searchResultsProjection } from './searchResults.js';

export const searchResultsQueries = (docs: DocReader) => ({
  /** the crawled result of `jobId` (a job answered from cache has none: ask for its source job's) */
  byJobId: (jobId: string) => docs.get<SearchResultDoc>(searchResultsProjection.name, jobId),
  /** whether `jobId` has a crawled result, without reading it (a result is ~100–700 kB of JSON) */
  has: (jobId: string) => docs.has(searchResultsProjection.name, jobId),
});
