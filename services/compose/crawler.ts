import type { SearchRequest } from '../../contracts/search.js';
import type { BrowserFetcher } from '../adapters/fetcher/browser.js';
import type { Crawler, CrawlLimits, FetcherMode } from '../crawler/crawl.js';
import { createTargetingResolver, type ResolvedTargeting } from '../crawler/targeting.js';
import type { LocationResolver } from '../geo/locations.js';
import type { Config } from './config.js';
import { createThreadedCrawler } from './crawlThread.js';
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
  locations?: LocationResolver;
  /** how a request's location becomes gl / hl / uule, when not through `locations` (the crawl thread's) */
  resolveTargeting?: (request: SearchRequest) => ResolvedTargeting;
  chromiumPath?: string;
  limits?: Partial<CrawlLimits>;
  /** proxy cooldown after a block (default 2,000 ms, doubling) */
  cooldownBaseMs?: number;
  /** requests at once per proxy or the direct route, over every job and page */
  routeMaxInFlight?: number;
  /** SERP_PARSE_THREADS: worker threads that parse pages (0: on the event loop) */
  parseThreads?: number;
  /** SERP_PARSE_TIMEOUT_MS: a page's parse deadline on a parse thread */
  parseTimeoutMs?: number;
}

/**
 * Wires a crawler as configured. With a browser (browser or auto), new sessions are opened by the browser on the
 * Google home page, so even the http fast path carries real session cookies; with http only they start empty.
 */
export const composeCrawler = async (setup: CrawlerSetup): Promise<Crawler> => {
  // loaded here, not with this module: with the crawl thread (SERP_CRAWL_THREAD) only that thread runs a crawler, and
  // the HTTP client, the browser driver and the crawler's modules stay out of the heap that serves HTTP
  const [
    { createBrowserFetcher },
    { createHttpFetcher },
    { createCrawler },
    { createParsePool },
    { createHashThread },
    { createSessionPool },
  ] = await Promise.all([
    import('../adapters/fetcher/browser.js'),
    import('../adapters/fetcher/http.js'),
    import('../crawler/crawl.js'),
    import('../crawler/parsePool.js'),
    import('../crawler/rawHash.js'),
    import('../crawler/sessions.js'),
  ]);
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
    resolveTargeting:
      setup.resolveTargeting ?? (setup.locations ? createTargetingResolver(setup.locations) : undefined),
    limits: setup.limits,
    // with the parse pool the event loop only moves bytes: the raw HTML's hash goes to a thread too
    ...(setup.parseThreads
      ? {
          parser: createParsePool(setup.parseThreads, { timeoutMs: setup.parseTimeoutMs }),
          hashing: createHashThread(),
        }
      : {}),
  });
};

/** The crawler as the service's configuration asks (SERP_FETCHER, proxies, limits), with start-up's fetcher warning. */
export const crawlerFromConfig = async (
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
    | 'parseTimeoutMs'
    | 'crawlThread'
  >,
  /** the process's location resolver, or how another thread's resolves a request (the pipeline thread's) */
  locations: LocationResolver | ((request: SearchRequest) => ResolvedTargeting),
): Promise<{ crawler: Crawler; warning?: string }> => {
  const resolveTargeting = typeof locations === 'function' ? locations : createTargetingResolver(locations);
  const choice = chooseFetcher(config.fetcher, config.chromiumPath);
  const setup = {
    fetcher: choice.fetcher,
    chromiumPath: choice.chromiumPath,
    googleOrigin: config.googleOrigin,
    proxyUrls: config.proxyUrls,
    routeMaxInFlight: config.routeMaxInFlight,
    parseThreads: config.parseThreads,
    parseTimeoutMs: config.parseTimeoutMs,
    limits: { pagesInFlight: config.pagesInFlight, stopDomainPagesInFlight: config.stopDomainPagesInFlight },
  };
  const crawler = config.crawlThread
    ? createThreadedCrawler(setup, resolveTargeting)
    : await composeCrawler({ ...setup, resolveTargeting });
  return { crawler, warning: choice.warning };
};
