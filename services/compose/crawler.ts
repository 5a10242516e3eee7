import { LANES } from '../../contracts/lanes.js';
import type { SearchRequest } from '../../contracts/search.js';
import type { BrowserFetcher } from '../adapters/fetcher/browser.js';
import type { Config } from '../config/config.js';
import type { Crawler, CrawlSettings } from '../crawler/crawl.js';
import type { RouteSettings } from '../crawler/sessions.js';
import { createTargetingResolver, type ResolvedTargeting } from '../crawler/targeting.js';
import { judgeWith, type LocationJudge } from '../geo/locationCheck.js';
import type { LocationResolver } from '../geo/locations.js';
import type { ConsumeOptions } from '../ports/jobQueue.js';
import { chooseFetcher } from './fetcherCheck.js';

/** The crawler's slice of the service configuration: its fetcher, routes, pages in flight and parse threads. */
export type CrawlerConfig = CrawlSettings &
  RouteSettings &
  Pick<
    Config,
    'fetcher' | 'chromiumPath' | 'chromiumHostRules' | 'parseThreads' | 'parseTimeoutMs' | 'pageRetryBackoffMs'
  >;

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
 * The crawler as the service's configuration asks (SERP_FETCHER, proxies, limits), with start-up's fetcher warning.
 * With a browser (browser or auto), new sessions are opened by the browser on the Google home page, so even the http
 * fast path carries real session cookies; with http only they start empty.
 */
export const crawlerFromConfig = async (
  config: CrawlerConfig,
  /** the process's location resolver, or how another thread's resolves a request (the pipeline thread's) */
  locations: LocationResolver | ((request: SearchRequest) => ResolvedTargeting),
  /** with a resolver from another thread: how that thread judges where Google placed a page */
  judgeElsewhere?: LocationJudge,
): Promise<{ crawler: Crawler; warning?: string }> => {
  const judgeLocation = typeof locations === 'function' ? judgeElsewhere : judgeOver(locations);
  const choice = chooseFetcher(config.fetcher, config.chromiumPath);
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
    import('../threads/parsePool.js'),
    import('../threads/hashThread.js'),
    import('../crawler/sessions.js'),
  ]);
  const http = choice.fetcher === 'browser' ? undefined : createHttpFetcher();
  const browser: BrowserFetcher | undefined =
    choice.fetcher === 'http'
      ? undefined
      : createBrowserFetcher({
          executablePath: choice.chromiumPath,
          extraArgs: config.chromiumHostRules ? [`--host-resolver-rules=${config.chromiumHostRules}`] : [],
        });
  const home = config.googleOrigin ?? 'https://www.google.com';
  const sessions = createSessionPool(
    config,
    browser ? { open: (session, device, signal) => browser.openSession(home, session, device, signal) } : {},
  );
  const crawler = createCrawler({
    settings: config,
    fetchers: { http, browser },
    fetcherMode: choice.fetcher,
    sessions,
    // a page's retries wait SERP_PAGE_RETRY_BACKOFF_MS, doubling (docs/configuration.md)
    limits: { backoffBaseMs: config.pageRetryBackoffMs },
    resolveTargeting: typeof locations === 'function' ? locations : createTargetingResolver(locations),
    ...(judgeLocation ? { judgeLocation } : {}),
    // with the parse pool the event loop only moves bytes: the raw HTML's hash goes to a thread too
    ...(config.parseThreads > 0 ? { parser: createParsePool(config), hashing: createHashThread() } : {}),
  });
  return { crawler, warning: choice.warning };
};

/** The location check over the process's resolver (docs/locations.md#the-check). */
export const judgeOver = (locations: LocationResolver): LocationJudge =>
  judgeWith({ resolve: (name) => locations.resolveLocation(name) });
