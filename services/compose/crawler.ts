import { type BrowserFetcher, createBrowserFetcher } from '../adapters/fetcher/browser.js';
import { createHttpFetcher } from '../adapters/fetcher/http.js';
import { createLocationResolver } from '../geo/locations.js';
import { type Crawler, type CrawlLimits, createCrawler, type FetcherMode } from './crawl.js';
import { createSessionPool } from './sessions.js';
import { createTargetingResolver } from './targeting.js';

/** The crawler's slice of the service configuration (services/compose reads the environment, not this file). */
export interface CrawlerSetup {
  /** SERP_FETCHER */
  fetcher: FetcherMode;
  /** SERP_GOOGLE_ORIGIN */
  googleOrigin?: string;
  /** SERP_PROXY_URLS */
  proxyUrls: readonly string[];
  /** where `locations import` put the geotargets; countries resolve without it */
  dataDir?: string;
  chromiumPath?: string;
  limits?: Partial<CrawlLimits>;
  /** proxy cooldown after a block (default 2,000 ms, doubling) */
  cooldownBaseMs?: number;
}

/**
 * Wires a crawler as configured. With a browser (browser or auto), new sessions are opened by the browser on the
 * Google home page, so even the http fast path carries real session cookies; with http only they start empty.
 */
export const createConfiguredCrawler = (setup: CrawlerSetup): Crawler => {
  const locations = createLocationResolver(setup.dataDir);
  const http = setup.fetcher === 'browser' ? undefined : createHttpFetcher();
  const browser: BrowserFetcher | undefined =
    setup.fetcher === 'http' ? undefined : createBrowserFetcher({ executablePath: setup.chromiumPath });
  const home = setup.googleOrigin ?? 'https://www.google.com';
  const sessions = createSessionPool({
    proxyUrls: setup.proxyUrls,
    cooldownBaseMs: setup.cooldownBaseMs,
    ...(browser ? { open: (session, device, signal) => browser.openSession(home, session, device, signal) } : {}),
  });
  const crawler = createCrawler({
    googleOrigin: setup.googleOrigin,
    fetchers: { http, browser },
    fetcherMode: setup.fetcher,
    sessions,
    resolveTargeting: createTargetingResolver(locations),
    limits: setup.limits,
  });
  return {
    crawl: crawler.crawl,
    async close() {
      await crawler.close();
      locations.close();
    },
  };
};
