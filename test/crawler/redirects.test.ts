import t from 'tap';
import { fetchPageWithRetries } from '../../services/crawler/fetchPage.js';
import { createSessionPool } from '../../services/crawler/sessions.js';
import type { Fetcher } from '../../services/ports/fetcher.js';
import { crawlerConfig } from '../support/crawlerHarness.js';

/**
 * A redirect the http fetcher did not follow (to another origin than the Google it asked) fails the page typed:
 * Google's consent page as the consent block it is, anything else as `redirect`, with no further request.
 */
const redirectingTo = (location: string): Fetcher & { calls: number } => {
  const fetcher = {
    name: 'http',
    calls: 0,
    async fetch(request: { url: string }) {
      fetcher.calls++;
      return {
        url: request.url,
        finalUrl: request.url,
        status: 302,
        body: Buffer.alloc(0),
        fetchedAt: new Date().toISOString(),
        redirectedTo: location,
      };
    },
    async close() {},
  };
  return fetcher;
};

const page = (fetcher: Fetcher) =>
  fetchPageWithRetries(
    {
      url: 'http://127.0.0.1:9/search?q=coffee',
      start: 0,
      first: true,
      device: 'desktop',
      captureAio: false,
      fetcher,
      heartbeat: () => undefined,
      onBlock: () => undefined,
    },
    createSessionPool(crawlerConfig({ SERP_ROUTE_COOLDOWN_S: '0.001' })),
    { maxAttemptsPerPage: 3, pageTimeoutMs: 5_000, backoffBaseMs: 1, backoffMaxMs: 1 },
  );

t.test('a redirect elsewhere fails the page as `redirect`, at once', async (t) => {
  const portal = redirectingTo('http://127.0.0.1:9/captive-portal/login');
  await t.rejects(page(portal), { name: 'CrawlRequestError', kind: 'redirect', status: 302 });
  t.equal(portal.calls, 1, 'not retried: the same route gets the same answer');
});

t.test("a redirect to Google's consent page is a consent block", async (t) => {
  const consent = redirectingTo('https://consent.google.com/ml?continue=https://www.google.com/search');
  await t.rejects(page(consent), { name: 'CrawlBlockedError', kind: 'consent' });
  t.equal(consent.calls, 3, 'retried on other sessions, as every block is');
});
