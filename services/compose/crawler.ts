import type { SearchRequest } from '../../contracts/search.js';
import type { BrowserFetcher } from '../adapters/fetcher/browser.js';
import type { Config } from '../config/config.js';
import type { Crawler, CrawlLimits, FetcherMode } from '../crawler/crawl.js';
import { createTargetingResolver, type ResolvedTargeting } from '../crawler/targeting.js';
import type { LocationResolver } from '../geo/locations.js';
import { chooseFetcher } from './fetcherCheck.js';

/** The crawler's slice of the service configuration (services/config reads the environment). */
export interface CrawlerSetup {
  /** SERP_FETCHER */
  fetcher: FetcherMode;
  /** SERP_GOOGLE_ORIGIN */
  googleOrigin?: string;
  /** SERP_PROXY_URLS */
  proxyUrls: readonly string[];
  /** the process's one location resolver (the api validates `location` with the same one) */
  locations?: LocationResolver;
  /** how a request's location becomes gl / hl / uule, when not through `locations` (the pipeline thread's) */
  resolveTargeting?: (request: SearchRequest) => ResolvedTargeting;
  chromiumPath?: string;
  /** SERP_CHROMIUM_HOST_RULES */
  chromiumHostRules?: string;
  limits?: Partial<CrawlLimits>;
  /** proxy cooldown after a block (default 2,000 ms, doubling) */
  cooldownBaseMs?: number;
  /** the longest cooldown (default 120,000 ms) */
  cooldownMaxMs?: number;
  /** SERP_ROUTE_MAX_RPM: per-route pacing's ceiling (0 or absent: none) */
  routeMaxRpm?: number;
  /** SERP_NO_ROUTE_WAIT_S */
  noRouteWaitMs?: number;
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
  // loaded here, not with this module: with the pipeline thread (the default) only that thread runs a crawler, and
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
    import('../runtime/parsePool.js'),
    import('../runtime/hashThread.js'),
    import('../crawler/sessions.js'),
  ]);
  const http = setup.fetcher === 'browser' ? undefined : createHttpFetcher();
  const browser: BrowserFetcher | undefined =
    setup.fetcher === 'http'
      ? undefined
      : createBrowserFetcher({
          executablePath: setup.chromiumPath,
          extraArgs: setup.chromiumHostRules ? [`--host-resolver-rules=${setup.chromiumHostRules}`] : [],
        });
  const home = setup.googleOrigin ?? 'https://www.google.com';
  const sessions = createSessionPool({
    proxyUrls: setup.proxyUrls,
    cooldownBaseMs: setup.cooldownBaseMs,
    cooldownMaxMs: setup.cooldownMaxMs,
    pacing: { maxRpm: setup.routeMaxRpm ?? 0 },
    noRouteWaitMs: setup.noRouteWaitMs,
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
    | 'chromiumHostRules'
    | 'googleOrigin'
    | 'proxyUrls'
    | 'routeMaxInFlight'
    | 'routeMaxRpm'
    | 'routeCooldownS'
    | 'routeCooldownMaxS'
    | 'noRouteWaitS'
    | 'pagesInFlight'
    | 'stopDomainPagesInFlight'
    | 'parseThreads'
    | 'parseTimeoutMs'
  >,
  /** the process's location resolver, or how another thread's resolves a request (the pipeline thread's) */
  locations: LocationResolver | ((request: SearchRequest) => ResolvedTargeting),
): Promise<{ crawler: Crawler; warning?: string }> => {
  const resolveTargeting = typeof locations === 'function' ? locations : createTargetingResolver(locations);
  const choice = chooseFetcher(config.fetcher, config.chromiumPath);
  const setup = {
    fetcher: choice.fetcher,
    chromiumPath: choice.chromiumPath,
    chromiumHostRules: config.chromiumHostRules,
    googleOrigin: config.googleOrigin,
    proxyUrls: config.proxyUrls,
    routeMaxInFlight: config.routeMaxInFlight,
    routeMaxRpm: config.routeMaxRpm,
    cooldownBaseMs: Math.round(config.routeCooldownS * 1000),
    cooldownMaxMs: Math.round(config.routeCooldownMaxS * 1000),
    noRouteWaitMs: Math.round(config.noRouteWaitS * 1000),
    parseThreads: config.parseThreads,
    parseTimeoutMs: config.parseTimeoutMs,
    limits: { pagesInFlight: config.pagesInFlight, stopDomainPagesInFlight: config.stopDomainPagesInFlight },
  };
  const crawler = await composeCrawler({ ...setup, resolveTargeting });
  return { crawler, warning: choice.warning };
};
