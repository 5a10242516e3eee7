import t from 'tap';
import { CrawlAbortedError } from '../../services/crawler/errors.js';
import { type PackedRaw, unpackRaw } from '../../services/crawler/rawPacker.js';
import { httpCrawlerFor, jobFor } from '../support/crawlerHarness.js';
import { DEFAULT_PAGES, startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';

/** the outcome's raw HTML as text */
const rawText = (o: { raw?: PackedRaw }) => (o.raw ? unpackRaw(o.raw) : undefined);

const skip = fixturesMissing();
const heartbeat = () => undefined;
const startOf = (r: { query: Record<string, string> }) => Number(r.query.start ?? 0);
/** the close of an aborted request reaches the origin a moment after the client gives up */
const settle = () => new Promise((r) => setTimeout(r, 50));

t.test('result pages fetched in parallel', { skip }, async (t) => {
  const google = await startFakeGoogle({ queries: { short: DEFAULT_PAGES.slice(0, 3) } });
  t.teardown(() => google.close());
  const { crawler, sessions } = httpCrawlerFor(google.origin, { env: { SERP_PAGES_IN_FLIGHT: '4' } });
  t.teardown(() => crawler.close());
  const { crawler: sequential } = httpCrawlerFor(google.origin, { env: { SERP_PAGES_IN_FLIGHT: '1' } });
  t.teardown(() => sequential.close());
  const fresh = (mode: Parameters<typeof google.setMode>[0] = {}) => {
    google.setMode(mode);
    google.requests.length = 0;
  };
  const searchesOf = (q: string) => google.searches().filter((r) => r.query.q === q);

  t.test(
    'when later pages arrive first › keeps start order and numbers positions 1..n as one by one would',
    async (t) => {
      // page 10 answers last, page 90 first
      fresh({ latencyMs: (start) => (start === 0 ? 0 : 120 - start) });
      const outcome = await crawler.crawl(jobFor({ keyword: 'cistern' }), { heartbeat });
      fresh();
      const reference = await sequential.crawl(jobFor({ keyword: 'cistern' }), { heartbeat });
      t.equal(outcome.status, 'done');
      t.same(
        outcome.pages.map((p) => p.start),
        [0, 10, 20, 30, 40, 50, 60, 70, 80, 90],
      );
      const organic = outcome.result?.organic_results ?? [];
      t.same(
        organic.map((r) => r.position),
        organic.map((_, i) => i + 1),
        'positions 1..n',
      );
      t.same(
        organic.map((r) => [r.link, r.page]),
        (reference.result?.organic_results ?? []).map((r) => [r.link, r.page]),
        'the same results in the same order as a crawl one page at a time',
      );
      t.equal(
        rawText(outcome)
          ?.match(/<!-- serp-page start=(\d+)/g)
          ?.join(','),
        rawText(reference)
          ?.match(/<!-- serp-page start=(\d+)/g)
          ?.join(','),
        'the raw HTML keeps every page in start order',
      );
      t.equal(sessions.stats().inFlight, 0, 'every session slot released');
    },
  );

  t.test('page 1 goes alone, then at most pagesInFlight pages at once', async (t) => {
    let open = 0;
    let peak = 0;
    let openAtPage1 = -1;
    fresh({
      latencyMs: (start) => {
        open += 1;
        peak = Math.max(peak, open);
        if (start === 0) openAtPage1 = open;
        setTimeout(() => {
          open -= 1;
        }, 40);
        return 40;
      },
    });
    await crawler.crawl(jobFor({ keyword: 'window' }), { heartbeat });
    t.equal(openAtPage1, 1, 'nothing else in flight with page 1');
    t.ok(peak > 1 && peak <= 4, `peak in flight ${peak}, bounded by 4`);
  });

  t.test('when a page is the last › aborts the requests after it', async (t) => {
    // three pages of results, then Google's no-results page at start=30; pages past it would take two seconds
    fresh({ latencyMs: (start) => (start >= 40 ? 2_000 : 30) });
    const outcome = await crawler.crawl(jobFor({ keyword: 'short' }), { heartbeat });
    await settle();
    t.equal(outcome.status, 'done');
    t.same(
      outcome.pages.map((p) => p.start),
      [0, 10, 20, 30],
    );
    const past = searchesOf('short').filter((r) => startOf(r) >= 40);
    t.ok(past.length <= 3, `at most one window past the last page (${past.length} requests)`);
    t.ok(
      past.every((r) => r.aborted),
      'every request past the last page was aborted',
    );
    t.equal(sessions.stats().inFlight, 0);
  });

  t.test('when the result count is reached › aborts the rest', async (t) => {
    const { crawler: few } = httpCrawlerFor(google.origin, {
      env: { SERP_PAGES_IN_FLIGHT: '4' },
      limits: { targetResults: 25 },
    });
    t.teardown(() => few.close());
    fresh({ latencyMs: (start) => (start >= 30 ? 2_000 : 20) });
    const outcome = await few.crawl(jobFor({ keyword: 'count' }), { heartbeat });
    await settle();
    t.equal(outcome.result?.organic_results.length, 25);
    t.same(
      outcome.pages.map((p) => p.start),
      [0, 10, 20],
    );
    t.ok(
      searchesOf('count')
        .filter((r) => startOf(r) >= 30)
        .every((r) => r.aborted),
      'pages past the count were aborted',
    );
  });

  t.test('with stop_domain › small waves, stopping at the page that shows the domain', async (t) => {
    fresh({ latencyMs: (start) => (start >= 40 ? 2_000 : 20) });
    const outcome = await crawler.crawl(jobFor({ keyword: 'folders', stop_domain: 'amazon.com' }), { heartbeat });
    await settle();
    t.equal(outcome.pages.length, 4, 'amazon.com is on the fourth page');
    const starts = searchesOf('folders').map(startOf);
    t.ok(Math.max(...starts) <= 40, `one page past it at most (asked: ${starts})`);
    t.ok(
      searchesOf('folders')
        .filter((r) => startOf(r) >= 40)
        .every((r) => r.aborted),
      'and that one aborted',
    );
  });

  t.test('when page 6 stays blocked › partial with pages 1-5, in order', async (t) => {
    fresh({ trouble: { kind: 'captcha' }, fromStart: 50, query: 'blocked six' });
    const outcome = await crawler.crawl(jobFor({ keyword: 'blocked six' }), { heartbeat });
    await settle();
    t.equal(outcome.status, 'partial');
    t.same(
      outcome.pages.map((p) => p.start),
      [0, 10, 20, 30, 40],
    );
    t.same(new Set(outcome.result?.organic_results.map((r) => r.page)), new Set([1, 2, 3, 4, 5]));
    t.equal(rawText(outcome)?.match(/<!-- serp-page start=/g)?.length, 5, 'the raw HTML holds the five pages');
    t.match(outcome.failure, { code: 'SERP_CRAWL_BLOCKED' });
    t.equal(sessions.stats().inFlight, 0, 'the pages after it gave their slots back');
  });

  t.test('when the job is aborted mid-crawl › every page in flight stops and the crawl rejects', async (t) => {
    fresh({ latencyMs: (start) => (start === 0 ? 0 : 2_000) });
    const controller = new AbortController();
    // aborted once later pages are in flight (they take 2 s to answer), however long page 1 took on a loaded machine
    const watch = setInterval(() => {
      if (searchesOf('drained').some((r) => startOf(r) > 0)) controller.abort();
    }, 5);
    t.teardown(() => clearInterval(watch));
    await t.rejects(
      crawler.crawl(jobFor({ keyword: 'drained' }), { heartbeat, signal: controller.signal }),
      CrawlAbortedError,
    );
    await settle();
    const later = searchesOf('drained').filter((r) => startOf(r) > 0);
    t.ok(later.length > 0, 'pages were in flight');
    t.ok(
      later.every((r) => r.aborted),
      'all of them aborted',
    );
    t.equal(sessions.stats().inFlight, 0);
  });
});
