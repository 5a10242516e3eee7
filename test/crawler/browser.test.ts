import t from 'tap';
import { createBrowserFetcher } from '../../services/adapters/fetcher/browser.js';
import { createHttpFetcher } from '../../services/adapters/fetcher/http.js';
import { createCrawler } from '../../services/crawler/crawl.js';
import { type PackedRaw, unpackRaw } from '../../services/crawler/rawPacker.js';
import { createSessionPool } from '../../services/crawler/sessions.js';
import { chromiumMissing, chromiumPath } from '../support/chromium.js';
import { crawlerConfig, FAST_LIMITS, jobFor } from '../support/crawlerHarness.js';
import { AIO_QUERY, startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { CHROMIUM_LOOPBACK_ARG } from '../support/loopback.js';

/** the outcome's raw HTML as text */
const rawText = (o: { raw?: PackedRaw }) => (o.raw ? unpackRaw(o.raw) : undefined);

const skip = fixturesMissing() ?? chromiumMissing();

t.test('real Chromium against the fake Google origin', { skip }, async (t) => {
  const google = await startFakeGoogle({ aioDelayMs: 1_000 });
  t.teardown(() => google.close());
  const browser = createBrowserFetcher({
    executablePath: chromiumPath,
    aioWaitMs: 6_000,
    extraArgs: [CHROMIUM_LOOPBACK_ARG],
  });
  t.teardown(() => browser.close());
  const heartbeat = () => undefined;
  const aioUrl = `${google.origin}/search?q=${encodeURIComponent(AIO_QUERY)}`;

  t.test('capture_aio: true waits for the AI Overview a script inserts after load', async (t) => {
    const page = await browser.fetch({ url: aioUrl, device: 'desktop', captureAio: true, timeoutMs: 15_000 });
    const html = page.body.toString('utf8');
    t.equal(page.status, 200);
    t.notOk(html.includes('class="fake-aio-slot"'), 'every slot was filled by the overview');
    t.match(html, /class="[^"]*\bmZJni\b/, 'the overview body is in the captured HTML');
    t.match(page.cookies, /NID=/, 'the cookies Google set come back for the session');
  });

  t.test('capture_aio: false does not wait, and returns no AI Overview', async (t) => {
    const page = await browser.fetch({ url: aioUrl, device: 'mobile', captureAio: false, timeoutMs: 15_000 });
    const html = page.body.toString('utf8');
    t.equal(page.status, 200);
    t.ok(html.includes('class="fake-aio-slot"'), 'the overview had not arrived');
    t.notMatch(html, /class="[^"]*\bmZJni\b/, 'no overview body in the HTML');
    const ua = google.searches().at(-1)?.headers['user-agent'];
    t.match(ua, /Mobile/, 'the mobile device profile was used');
  });

  t.test('SERP_FETCHER=browser: the crawl keeps the AI Overview only with capture_aio', async (t) => {
    const crawler = createCrawler({
      settings: crawlerConfig({ SERP_GOOGLE_ORIGIN: google.origin }),
      fetchers: { browser },
      fetcherMode: 'browser',
      sessions: createSessionPool(crawlerConfig()),
      limits: { ...FAST_LIMITS, maxPages: 1, pageTimeoutMs: 15_000 },
    });
    const withAio = await crawler.crawl(jobFor({ keyword: AIO_QUERY, capture_aio: true }), { heartbeat });
    const without = await crawler.crawl(jobFor({ keyword: AIO_QUERY, capture_aio: false }), { heartbeat });
    t.equal(withAio.status, 'done');
    t.equal(without.status, 'done');
    t.equal(withAio.pages[0]?.fetcher, 'browser');
    t.notOk(rawText(withAio)?.includes('class="fake-aio-slot"'), 'stored HTML holds the overview');
    t.ok(rawText(without)?.includes('class="fake-aio-slot"'), 'stored HTML without it');
    t.equal(without.result?.ai_overview, undefined, 'no ai_overview when capture_aio is false');
    t.ok((withAio.result?.ai_overview?.text_blocks.length ?? 0) > 0, 'the parsed result has the AI Overview');
  });

  t.test('SERP_FETCHER=auto: the browser opens sessions whose cookies the http fetcher reuses', async (t) => {
    google.setMode({ requireCookie: true });
    t.teardown(() => google.setMode({}));
    const opened: string[] = [];
    const sessions = createSessionPool(crawlerConfig(), {
      open: async (session, device, signal) => {
        const visit = await browser.openSession(google.origin, session, device, signal);
        opened.push(visit.cookies);
        return visit;
      },
    });
    const crawler = createCrawler({
      settings: crawlerConfig({ SERP_GOOGLE_ORIGIN: google.origin }),
      fetchers: { http: createHttpFetcher(), browser },
      fetcherMode: 'auto',
      sessions,
      limits: { ...FAST_LIMITS, pageTimeoutMs: 15_000 },
    });
    const outcome = await crawler.crawl(jobFor({ keyword: 'cistern', stop_domain: 'dictionary.com' }), { heartbeat });
    t.equal(outcome.status, 'done');
    t.equal(outcome.blocks, 0, 'no JS challenge: the http requests carried the browser session cookies');
    t.same(
      outcome.pages.map((p) => p.fetcher),
      ['http', 'http'],
      'capture_aio false takes the fast path',
    );
    t.equal(opened.length, 1, 'one session opened by the browser');
    t.match(opened[0], /NID=/);
    t.equal(google.searches().at(-1)?.headers.cookie, opened[0]);
  });

  t.test('SERP_FETCHER=http without a browser session gets the JS challenge and fails', async (t) => {
    google.setMode({ requireCookie: true });
    t.teardown(() => google.setMode({}));
    const crawler = createCrawler({
      settings: crawlerConfig({ SERP_GOOGLE_ORIGIN: google.origin }),
      fetchers: { http: createHttpFetcher() },
      fetcherMode: 'http',
      sessions: createSessionPool(crawlerConfig()),
      limits: FAST_LIMITS,
    });
    const outcome = await crawler.crawl(jobFor({ keyword: 'cistern' }), { heartbeat });
    t.equal(outcome.status, 'failed');
    t.match(outcome.reason, /js_challenge/);
  });
});
