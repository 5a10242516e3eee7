import type { CrawlCost, LocationCheck, PageFetched, RawHtmlRef, TargetingUsed } from '../../contracts/events.js';
import type { ParsedSerp } from '../../contracts/result.js';
import { depthOf } from '../../contracts/search.js';
import type { Projection } from '../projection.js';

/** The parsed result of a crawled job. Jobs answered from cache have no document: they point at their source job. */
export interface SearchResultDoc {
  jobId: string;
  status: 'done' | 'partial';
  result: ParsedSerp;
  pages: PageFetched[];
  rawHtmlRef: RawHtmlRef;
  parserVersion: string;
  /** what the crawl sent Google; absent for jobs completed before CrawlCompleted recorded it */
  targeting?: TargetingUsed;
  /** the depth crawled (docs/depth.md): 100 for crawls recorded before depth existed */
  depth: number;
  /** the crawl ended before its depth did (the last page, or stop_domain found): Google has no more for it */
  exhausted: boolean;
  /** blocks met on the way (CrawlCompleted.blocks); absent in documents projected before it was kept */
  blocks?: number;
  /** what the crawl cost in Google requests; absent for jobs completed before CrawlCompleted recorded it */
  cost?: CrawlCost;
  /** where Google placed the search against where it was asked to; absent for crawls before the check existed */
  locationCheck?: LocationCheck;
  completedAt: string;
  reparsedAt?: string;
}

export const searchResultsProjection: Projection<SearchResultDoc> = {
  name: 'searchResults',
  idOf: (e) =>
    e.type === 'CrawlCompleted' || e.type === 'SearchReparsed' || e.type === 'SearchPurged' ? e.data.jobId : undefined,
  /**
   * The projector hands events over with `result` filled from `resultRef` (services/projector/projector.ts); a result
   * the blob store no longer has (purged at retention) makes no document.
   */
  evolve(doc, e) {
    if (e.type === 'SearchPurged') return null;
    if (e.type === 'CrawlCompleted') {
      const {
        jobId,
        status,
        result,
        pages,
        rawHtmlRef,
        parserVersion,
        targeting,
        blocks,
        cost,
        exhausted,
        locationCheck,
        completedAt,
      } = e.data;
      if (!result) return null;
      return {
        jobId,
        status,
        result,
        pages,
        rawHtmlRef,
        parserVersion,
        ...(targeting ? { targeting } : {}),
        blocks,
        ...(cost ? { cost } : {}),
        depth: depthOf(e.data),
        exhausted: exhausted ?? false,
        ...(locationCheck ? { locationCheck } : {}),
        completedAt,
      };
    }
    if (e.type === 'SearchReparsed' && doc && e.data.result) {
      return { ...doc, result: e.data.result, parserVersion: e.data.parserVersion, reparsedAt: e.data.reparsedAt };
    }
    return doc ?? null;
  },
};
