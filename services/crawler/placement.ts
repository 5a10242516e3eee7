import type { LocationCheck, Placement } from '../../contracts/events.js';
import type { DetectedLocation } from '../../contracts/result.js';
import type { SearchRequest } from '../../contracts/search.js';
import type { RouteAdvice } from '../../domain/location/routeChoice.js';
import { isWrongPlace, type Judgement, type LocationJudge } from '../geo/locationCheck.js';
import { CrawlAbortedError } from './errors.js';
import { fetchPageWithRetries, type KeptPage, type PageJob, type PageLimits } from './fetchPage.js';
import type { SessionPool } from './sessions.js';

/** A page Google placed elsewhere even on another route: the search ends there, `partial`. */
export interface Misplaced {
  /** one sentence, for the log and the result's `location_check.reason` */
  reason: string;
}

/**
 * A crawl's pages as Google placed them (docs/locations.md#the-retry): each page is judged when it arrives, and one
 * placed elsewhere (mismatched, its region or its country only) is fetched once more on another route (a new session
 * on the same route when there is no other) before the crawl takes it. Every judgement is kept, the retries' too.
 */
export interface Placing {
  /** the page at `job.start`, judged, and fetched again once if Google placed it elsewhere */
  fetch(job: PageJob, sessions: SessionPool, limits: PageLimits): Promise<KeptPage>;
  /** the page the crawl took at `start` is still placed elsewhere: why (the crawl stops there) */
  misplaced(start: number): Misplaced | undefined;
  /** the search's check, over the pages the crawl kept */
  check(kept: readonly KeptPage[]): LocationCheck;
}

export const createPlacing = (
  judge: LocationJudge,
  request: SearchRequest,
  location: string | undefined,
  /** what the place's record advises (docs/locations.md#how-routes-are-chosen): followed by the page and its retry */
  advice: RouteAdvice = {},
): Placing => {
  const placements: Placement[] = [];
  /** by page offset: the verdict on the page the crawl takes there, and what it named */
  const verdicts = new Map<number, { verdict: Judgement; detected?: DetectedLocation; retried: boolean }>();
  let retries = 0;

  const judged = async (page: KeptPage): Promise<Judgement> => {
    const detected = page.serp.information.detected_location;
    const verdict = await judge(request, location, detected);
    placements.push({
      route: page.route,
      start: page.start,
      status: verdict.status,
      ...(detected ? { detected: detected.name } : {}),
    });
    verdicts.set(page.start, { verdict, ...(detected ? { detected } : {}), retried: false });
    return verdict;
  };

  const sentence = (at: { verdict: Judgement; detected?: DetectedLocation; retried: boolean }): string => {
    const { verdict, detected } = at;
    const where = detected ? `in ${JSON.stringify(detected.name)}` : 'elsewhere';
    const how =
      verdict.status === 'mismatched'
        ? 'elsewhere'
        : verdict.status === 'region_only'
          ? 'its region only'
          : 'its country only';
    const tried = at.retried ? 'also on another route' : 'and no other route could be tried';
    return `location_mismatch: Google placed this search ${where} (${how}), not in ${verdict.requested ?? 'the place asked for'}, ${tried}; its results are not from the place asked for`;
  };

  return {
    async fetch(job, sessions, limits) {
      const page = await fetchPageWithRetries(
        {
          ...job,
          ...(advice.avoid?.length ? { avoid: advice.avoid } : {}),
          ...(advice.prefer ? { prefer: advice.prefer } : {}),
        },
        sessions,
        limits,
      );
      const verdict = await judged(page);
      if (!isWrongPlace(verdict.status)) return page;
      retries += 1;
      try {
        // the retry also keeps off the routes the place's record sets aside
        const avoid = [...new Set([...(advice.avoid ?? []), page.route])];
        const again = await fetchPageWithRetries({ ...job, avoid }, sessions, limits);
        await judged(again);
        const taken = verdicts.get(again.start);
        if (taken) taken.retried = true;
        return again;
      } catch (err) {
        // the retry could not be made (blocks, no route): the page Google placed elsewhere stands, flagged
        if (err instanceof CrawlAbortedError || job.signal?.aborted) throw err;
        return page;
      }
    },
    misplaced(start) {
      const at = verdicts.get(start);
      return at && isWrongPlace(at.verdict.status) ? { reason: sentence(at) } : undefined;
    },
    check(kept) {
      const taken = kept.flatMap((p) => verdicts.get(p.start) ?? []);
      const wrong = taken.find((t) => isWrongPlace(t.verdict.status));
      const at = wrong ?? taken.find((t) => t.verdict.status === 'matched') ?? taken[0];
      const verdict: Judgement = at?.verdict ?? { status: 'unverified', reason: 'no page was judged' };
      return {
        status: verdict.status,
        ...(verdict.requested ? { requested: verdict.requested } : {}),
        ...(at?.detected ? { detected: at.detected } : {}),
        ...(verdict.detectedPlace ? { detectedPlace: verdict.detectedPlace } : {}),
        ...(wrong ? { reason: sentence(wrong) } : verdict.reason ? { reason: verdict.reason } : {}),
        retries,
        placements,
      };
    },
  };
};
