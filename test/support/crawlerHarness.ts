import type { JobMessage } from '../../contracts/jobMessage.js';
import { SearchRequest } from '../../contracts/search.js';
import { createHttpFetcher } from '../../services/adapters/fetcher/http.js';
import { loadConfig } from '../../services/config/config.js';
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

/**
 * The crawler's configuration for a test, from variables as an operator sets them (`env`; the schema's defaults for
 * the rest) over these: unpaced, and routes that rest 5 ms after a block (20 ms at most), so the retry paths stay fast.
 */
export const crawlerConfig = (env: Record<string, string> = {}) =>
  loadConfig({ SERP_ROUTE_MAX_RPM: '0', SERP_ROUTE_COOLDOWN_S: '0.005', SERP_ROUTE_COOLDOWN_MAX_S: '0.02', ...env });

/** An http-only crawler aimed at a fake Google origin; `env` configures it as crawlerConfig's does. */
export const httpCrawlerFor = (
  origin: string,
  extra: {
    env?: Record<string, string>;
    limits?: Partial<CrawlLimits>;
    pool?: SessionPoolOptions;
    deps?: Partial<CrawlerDeps>;
  } = {},
) => {
  const config = crawlerConfig({ SERP_GOOGLE_ORIGIN: origin, ...extra.env });
  const sessions = createSessionPool(config, extra.pool);
  const crawler = createCrawler({
    settings: config,
    fetchers: { http: createHttpFetcher() },
    fetcherMode: 'http',
    sessions,
    limits: { ...FAST_LIMITS, ...extra.limits },
    ...extra.deps,
  });
  return { crawler, sessions };
};
