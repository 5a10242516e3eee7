import { LANES } from '../../contracts/lanes.js';
import type { SearchRequest } from '../../contracts/search.js';
import type { BrowserFetcher } from '../adapters/fetcher/browser.js';
import type { Config } from '../config/config.js';
import type { Crawler, CrawlLimits, FetcherMode } from '../crawler/crawl.js';
import { createTargetingResolver, type ResolvedTargeting } from '../crawler/targeting.js';
import type { LocationResolver } from '../geo/locations.js';
import type { ConsumeOptions } from '../ports/jobQueue.js';
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
  /** SERP_FAIR_SHARE: page requests in the fair queue by lane and key (default), or first come first served */
  fairShare?: boolean;
  /** SERP_LANE_MIN_SHARE */
  laneMinShare?: number;
}

/**
 * A crawler's slots per queue class (docs/fleet.md#lanes-and-fair-share): SERP_CRAWLER_CONCURRENCY jobs of each lane,
 * and a quarter as many more for each lane's express class (its keys' first jobs). Pages, not slots, are what the
 * lanes and keys share: the session pool's fair queue decides whose page goes next. First come first served: one
 * queue with SERP_CRAWLER_CONCURRENCY slots, as before lanes.
 */
export const crawlerSlots = (
  config: Pick<Config, 'crawlerConcurrency' | 'fairShare'>,
): ConsumeOptions['concurrency'] => {
  const c = config.crawlerConcurrency;
  if (!config.fairShare) return { live: c };
  const express = Math.max(1, Math.ceil(c / 4));
  return Object.fromEntries(
    LANES.flatMap((lane) => [
      [lane, c],
      [`${lane}.first`, express],
    ]),
  );
};

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
    ...(setup.laneMinShare !== undefined ? { laneMinShare: setup.laneMinShare } : {}),
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
    fairShare: setup.fairShare ?? true,
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
    | 'routeCooldownMs'
    | 'routeCooldownMaxMs'
    | 'noRouteWaitMs'
    | 'pagesInFlight'
    | 'stopDomainPagesInFlight'
    | 'parseThreads'
    | 'parseTimeoutMs'
    | 'fairShare'
    | 'laneMinShare'
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
    cooldownBaseMs: config.routeCooldownMs,
    cooldownMaxMs: config.routeCooldownMaxMs,
    noRouteWaitMs: config.noRouteWaitMs,
    parseThreads: config.parseThreads,
    parseTimeoutMs: config.parseTimeoutMs,
    fairShare: config.fairShare,
    laneMinShare: config.laneMinShare,
    limits: { pagesInFlight: config.pagesInFlight, stopDomainPagesInFlight: config.stopDomainPagesInFlight },
  };
  const crawler = await composeCrawler({ ...setup, resolveTargeting });
  return { crawler, warning: choice.warning };
};
