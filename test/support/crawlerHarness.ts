import type { JobMessage } from '../../contracts/jobMessage.js';
import { SearchRequest } from '../../contracts/search.js';
import { createHttpFetcher } from '../../services/adapters/fetcher/http.js';
import { type CrawlerDeps, type CrawlLimits, createCrawler } from '../../services/crawler/crawl.js';
import { createSessionPool, type SessionPoolOptions } from '../../services/crawler/sessions.js';

let seq = 0;

/** A job message as the dispatcher would enqueue it, with the request normalised by the real schema. */
export const jobFor = (request: Record<string, unknown>): JobMessage => {
  seq += 1;
  return {
    jobId: seq.toString(16).padStart(24, '0'),
    dispatch: 0,
    keyId: 'key-test',
    cacheKey: `cache-${seq}`,
    submittedAt: new Date().toISOString(),
    request: SearchRequest.parse({ capture_aio: false, ...request }),
  };
};

/** Limits that keep the retry paths fast in tests; the decisions are the same as in production. */
export const FAST_LIMITS: Partial<CrawlLimits> = {
  maxAttemptsPerPage: 3,
  pageTimeoutMs: 5_000,
  backoffBaseMs: 5,
  backoffMaxMs: 20,
};

/** An http-only crawler aimed at a fake Google origin. */
export const httpCrawlerFor = (
  origin: string,
  extra: { limits?: Partial<CrawlLimits>; pool?: SessionPoolOptions; deps?: Partial<CrawlerDeps> } = {},
) => {
  const sessions = createSessionPool({ cooldownBaseMs: 5, cooldownMaxMs: 20, ...extra.pool });
  const crawler = createCrawler({
    googleOrigin: origin,
    fetchers: { http: createHttpFetcher() },
    fetcherMode: 'http',
    sessions,
    limits: { ...FAST_LIMITS, ...extra.limits },
    ...extra.deps,
  });
  return { crawler, sessions };
};
