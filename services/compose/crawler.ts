import { type BrowserFetcher, createBrowserFetcher } from '../adapters/fetcher/browser.js';
import { createHttpFetcher } from '../adapters/fetcher/http.js';
import { type Crawler, type CrawlLimits, createCrawler, type FetcherMode } from '../crawler/crawl.js';
import { createParsePool } from '../crawler/parsePool.js';
import { createHashThread } from '../crawler/rawHash.js';
import { createSessionPool } from '../crawler/sessions.js';
import { createTargetingResolver } from '../crawler/targeting.js';
import type { LocationResolver } from '../geo/locations.js';
import type { Config } from './config.js';
import { chooseFetcher } from './fetcherCheck.js';

/** The crawler's slice of the service configuration (compose/config.ts reads the environment). */
export interface CrawlerSetup {
  /** SERP_FETCHER */
  fetcher: FetcherMode;
  /** SERP_GOOGLE_ORIGIN */
  googleOrigin?: string;
  /** SERP_PROXY_URLS */
  proxyUrls: readonly string[];
  /** the process's one location resolver (the api validates `location` with the same one) */
  locations: LocationResolver;
  chromiumPath?: string;
  limits?: Partial<CrawlLimits>;
  /** proxy cooldown after a block (default 2,000 ms, doubling) */
  cooldownBaseMs?: number;
  /** requests at once per proxy or the direct route, over every job and page */
  routeMaxInFlight?: number;
  /** SERP_PARSE_THREADS: worker threads that parse pages (0: on the event loop) */
  parseThreads?: number;
}

/**
 * Wires a crawler as configured. With a browser (browser or auto), new sessions are opened by the browser on the
 * Google home page, so even the http fast path carries real session cookies; with http only they start empty.
 */
export const composeCrawler = (setup: CrawlerSetup): Crawler => {
  const http = setup.fetcher === 'browser' ? undefined : createHttpFetcher();
  const browser: BrowserFetcher | undefined =
    setup.fetcher === 'http' ? undefined : createBrowserFetcher({ executablePath: setup.chromiumPath });
  const home = setup.googleOrigin ?? 'https://www.google.com';
  const sessions = createSessionPool({
    proxyUrls: setup.proxyUrls,
    cooldownBaseMs: setup.cooldownBaseMs,
    maxInFlightPerRoute: setup.routeMaxInFlight,
    ...(browser ? { open: (session, device, signal) => browser.openSession(home, session, device, signal) } : {}),
  });
  return createCrawler({
    googleOrigin: setup.googleOrigin,
    fetchers: { http, browser },
    fetcherMode: setup.fetcher,
    sessions,
    resolveTargeting: createTargetingResolver(setup.locations),
    limits: setup.limits,
    // with the parse pool the event loop only moves bytes: the raw HTML's hash goes to a thread too
    ...(setup.parseThreads ? { parser: createParsePool(setup.parseThreads), hashing: createHashThread() } : {}),
  });
};

/** The crawler as the service's configuration asks (SERP_FETCHER, proxies, limits), with start-up's fetcher warning. */
export const crawlerFromConfig = (
  config: Pick<
    Config,
    | 'fetcher'
    | 'chromiumPath'
    | 'googleOrigin'
    | 'proxyUrls'
    | 'routeMaxInFlight'
    | 'pagesInFlight'
    | 'stopDomainPagesInFlight'
    | 'parseThreads'
  >,
  locations: LocationResolver,
): { crawler: Crawler; warning?: string } => {
  const choice = chooseFetcher(config.fetcher, config.chromiumPath);
  const crawler = composeCrawler({
    fetcher: choice.fetcher,
    chromiumPath: choice.chromiumPath,
    googleOrigin: config.googleOrigin,
    proxyUrls: config.proxyUrls,
    locations,
    routeMaxInFlight: config.routeMaxInFlight,
    parseThreads: config.parseThreads,
    limits: { pagesInFlight: config.pagesInFlight, stopDomainPagesInFlight: config.stopDomainPagesInFlight },
  });
  return { crawler, warning: choice.warning };
};
