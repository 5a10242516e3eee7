import t, { type Test } from 'tap';
import { failureDetail } from '../../services/answers/publicFailure.js';
import { createCrawler } from '../../services/crawler/crawl.js';
import { CrawlAbortedError } from '../../services/crawler/errors.js';
import { MAX_PAGE_BYTES } from '../../services/crawler/fetchPage.js';
import { type PackedRaw, unpackRaw } from '../../services/crawler/rawPacker.js';
import { inlineParser } from '../../services/crawler/readPage.js';
import { createSessionPool } from '../../services/crawler/sessions.js';
import { createTargetingResolver } from '../../services/crawler/targeting.js';
import { createLocationResolver } from '../../services/geo/locations.js';
import { uuleForName } from '../../services/geo/uule.js';
import type { Fetcher } from '../../services/ports/fetcher.js';
import { MAX_PAGE_TAGS, type PageParser } from '../../services/ports/pageParser.js';
import { crawlerConfig, httpCrawlerFor, jobFor } from '../support/crawlerHarness.js';
import { startFakeGoogle, type Trouble } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';

/** the outcome's raw HTML as text */
const rawText = (o: { raw?: PackedRaw }) => (o.raw ? unpackRaw(o.raw) : undefined);

const skip = fixturesMissing();

t.test('crawl() against the fake Google origin', { skip }, async (t) => {
  const google = await startFakeGoogle();
  t.teardown(() => google.close());
  const { crawler } = httpCrawlerFor(google.origin);
  t.teardown(() => crawler.close());
  const heartbeat = () => undefined;
  const fresh = () => {
    google.setMode({});
    google.requests.length = 0;
  };
  // each test searches its own keyword and its trouble applies to that keyword only: a page an earlier test aborted
  // in flight may still reach the origin after fresh()
  const searchesOf = (q: string) => google.searches().filter((r) => r.query.q === q);

  t.test('paginates ten pages with one request each and continuous positions over all of them', async (t) => {
    fresh();
    const outcome = await crawler.crawl(jobFor({ keyword: 'cistern' }), { heartbeat });
    t.equal(outcome.status, 'done');
    const searches = google.searches();
    t.equal(searches.length, 10, 'ten requests');
    t.equal(Number(searches[0]?.query.start ?? 0), 0, 'page 1 goes first, alone');
    t.same(
      searches.map((r) => Number(r.query.start ?? 0)).sort((a, b) => a - b),
      [0, 10, 20, 30, 40, 50, 60, 70, 80, 90],
    );
    t.same(
      outcome.pages.map((p) => p.start),
      [0, 10, 20, 30, 40, 50, 60, 70, 80, 90],
      'pages kept in start order',
    );
    t.equal(outcome.pages.length, 10);
    const organic = outcome.result?.organic_results ?? [];
    t.ok(organic.length > 80, `most of the 94 results (${organic.length}) kept after dedupe`);
    t.same(
      organic.map((r) => r.position),
      organic.map((_, i) => i + 1),
      'positions run 1..N',
    );
    t.same(new Set(organic.map((r) => r.page)), new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), 'every page contributed');
    t.equal(rawText(outcome)?.match(/<!-- serp-page start=/g)?.length, 10, 'raw HTML holds every page with its marker');
    t.equal(outcome.blocks, 0);
    t.equal(searches[0]?.query.q, 'cistern');
  });

  t.test('depth: asks Google only for the pages its depth needs', async (t) => {
    fresh();
    const one = await crawler.crawl(jobFor({ keyword: 'depth one page', depth: 10 }), { heartbeat });
    t.equal(searchesOf('depth one page').length, 1, 'depth 10: one Google request');
    t.equal(one.pages.length, 1);
    const n = one.result?.organic_results.length ?? 0;
    t.ok(n > 0 && n <= 10, `the first page's results (${n})`);
    t.equal(one.exhausted, false, 'Google has more: stopped by depth, not by the last page');
    const three = await crawler.crawl(jobFor({ keyword: 'depth three pages', depth: 30 }), { heartbeat });
    t.same(
      searchesOf('depth three pages')
        .map((r) => Number(r.query.start ?? 0))
        .sort((a, b) => a - b),
      [0, 10, 20],
      'depth 30: three pages, and none past them even in flight',
    );
    const organic = three.result?.organic_results ?? [];
    t.ok(organic.length > 20 && organic.length <= 30, `at most 30 results (${organic.length})`);
    t.same(
      organic.map((r) => r.position),
      organic.map((_, i) => i + 1),
    );
    const trimmed = await crawler.crawl(jobFor({ keyword: 'depth trimmed', depth: 15 }), { heartbeat });
    t.equal(searchesOf('depth trimmed').length, 2, 'depth 15: two pages');
    t.ok((trimmed.result?.organic_results.length ?? 0) <= 15, 'trimmed to the depth');
  });

  t.test('stops at the page where stop_domain first appears', async (t) => {
    fresh();
    const outcome = await crawler.crawl(jobFor({ keyword: 'folders', stop_domain: 'amazon.com' }), { heartbeat });
    t.equal(outcome.status, 'done');
    const starts = google.searches().map((r) => Number(r.query.start ?? 0));
    t.ok(starts.length >= 4 && starts.length <= 5, `amazon.com first appears on the fourth page (${starts})`);
    t.ok(
      starts.every((s) => s <= 40),
      'at most one page past it was asked for (the stop_domain window is two)',
    );
    t.equal(outcome.pages.length, 4);
    t.ok(outcome.result?.organic_results.some((r) => r.link?.includes('amazon.com')));
    t.equal(outcome.exhausted, true, 'a deeper crawl would have stopped there too');
  });

  t.test('a news tab (tbm=nws) pages on through its articles, which are not organic results', async (t) => {
    const NEWS = 'serp/search-navigator/20250615-news-schloss-johannisberg-tokyo.html.gz';
    const news = await startFakeGoogle({ queries: { 'schloss johannisberg': [NEWS, NEWS] } });
    t.teardown(() => news.close());
    const { crawler: c } = httpCrawlerFor(news.origin);
    t.teardown(() => c.close());
    const outcome = await c.crawl(jobFor({ keyword: 'schloss johannisberg', tbm: 'nws' }), { heartbeat });
    t.equal(outcome.status, 'done');
    t.ok(news.searches().length >= 2, `a page of articles is not the last page (${news.searches().length} requests)`);
    t.ok(
      news.searches().every((r) => r.query.tbm === 'nws'),
      'every request asks for the news tab',
    );
    const articles = (outcome.result?.serp_features.news_results ?? []) as { position: number }[];
    t.equal(articles.length, 10, 'the ten articles, the repeated page merged away');
    t.same(
      articles.map((a) => a.position),
      articles.map((_, i) => i + 1),
    );
    t.equal(outcome.result?.organic_results.length, 0);
  });

  t.test('ends at the last page when Google has no more results', async (t) => {
    const short = await startFakeGoogle({
      queries: { short: ['serp/websearcher/2024-03-13_cistern_81f344a9684a.html.gz'] },
    });
    t.teardown(() => short.close());
    const { crawler: c } = httpCrawlerFor(short.origin);
    const outcome = await c.crawl(jobFor({ keyword: 'short' }), { heartbeat });
    t.equal(outcome.status, 'done');
    const requests = short.searches();
    // page 1 alone, then one window of 5: whether the window's later requests reach the origin before page 2's answer
    // aborts them is a race (on loopback, thread-pool work such as the packer's gzip decides it); never more
    t.ok(
      requests.length >= 2 && requests.length <= 6,
      `the second page had no results: one window past page 1 at most (${requests.length})`,
    );

    t.equal(outcome.pages.length, 2);
    t.equal(outcome.result?.organic_results.length, 10);
    t.equal(outcome.exhausted, true, 'all Google had: it answers any depth');
  });

  t.test('ends at a page whose pager has no "Next" link', async (t) => {
    const PAGED = 'serp/debug-dumps-2025-2026/roig_2024-11-20_alquiler-vehiculos-mallorca_en-ES.html.gz';
    const pages = [PAGED, PAGED, PAGED];
    let served = 0;
    const pager = await startFakeGoogle({
      queries: { pager: pages },
      // the second page keeps its numbered page links but loses "Next", as Google's last page does
      transform: (_path, html) => (++served === 2 ? html.replace(/\bid="?pnnext"?/g, '') : html),
    });
    t.teardown(() => pager.close());
    // one page at a time, so the transform's second call is the second page
    const { crawler: c } = httpCrawlerFor(pager.origin, { env: { SERP_PAGES_IN_FLIGHT: '1' } });
    t.teardown(() => c.close());
    const outcome = await c.crawl(jobFor({ keyword: 'pager' }), { heartbeat });
    t.equal(outcome.status, 'done');
    t.equal(pager.searches().length, 2, 'no request after the page without "Next"');
  });

  t.test('retries a blocked page on a new session and counts the blocks', async (t) => {
    fresh();
    google.setMode({ trouble: { kind: 'captcha' }, fromStart: 20, firstRequests: 2, query: 'retried' });
    // one page at a time, so both blocks fall on the third page
    const { crawler: sequential } = httpCrawlerFor(google.origin, { env: { SERP_PAGES_IN_FLIGHT: '1' } });
    t.teardown(() => sequential.close());
    const outcome = await sequential.crawl(jobFor({ keyword: 'retried' }), { heartbeat });
    t.equal(outcome.status, 'done');
    t.equal(outcome.blocks, 2);
    t.equal(outcome.pages.length, 10, 'no page lost');
    const third = searchesOf('retried').filter((r) => r.query.start === '20');
    t.equal(third.length, 3, 'blocked twice, then served');
    const blockedCookie = third[0]?.headers.cookie;
    t.match(blockedCookie, /NID=/, 'the blocked session carried the cookie Google gave it');
    t.not(third[1]?.headers.cookie, blockedCookie, 'the retry came from another session');
    t.not(third[2]?.headers.cookie, blockedCookie);
  });

  const blocks: Array<[string, Trouble]> = [
    ['a redirect to /sorry/index', { kind: 'sorry_redirect' }],
    ['the JS challenge', { kind: 'js_challenge' }],
    ['the consent page', { kind: 'consent' }],
    ['HTTP 429', { kind: 'status', status: 429 }],
  ];
  for (const [name, trouble] of blocks) {
    t.test(`treats ${name} as a block`, async (t) => {
      fresh();
      google.setMode({ trouble, firstRequests: 1, query: `block ${name}` });
      const outcome = await crawler.crawl(jobFor({ keyword: `block ${name}`, stop_domain: 'dictionary.com' }), {
        heartbeat,
      });
      t.equal(outcome.status, 'done');
      t.equal(outcome.blocks, 1);
      t.equal(outcome.pages.length, 2);
      t.equal(outcome.pages[0]?.status, 200, 'the kept page is the real one');
    });
  }

  t.test('retries 5xx and timeouts without counting them as blocks', async (t) => {
    for (const trouble of [
      { kind: 'status', status: 503 },
      { kind: 'status', status: 500 },
      { kind: 'hang' },
    ] as Trouble[]) {
      fresh();
      const q = `transient ${trouble.kind}${'status' in trouble ? ` ${trouble.status}` : ''}`;
      google.setMode({ trouble, firstRequests: 1, query: q });
      const { crawler: c } = httpCrawlerFor(google.origin, { limits: { pageTimeoutMs: 300 } });
      const outcome = await c.crawl(jobFor({ keyword: q, stop_domain: 'dictionary.com' }), { heartbeat });
      t.equal(outcome.status, 'done', trouble.kind);
      t.equal(outcome.blocks, 0);
      const starts = searchesOf(q).map((r) => Number(r.query.start ?? 0));
      t.equal(starts.filter((s) => s === 0).length, 2, 'one failed request, then page 1');
      t.equal(starts.filter((s) => s === 10).length, 1, 'and page 2 once');
    }
  });

  t.test('blocked from the fourth page on for good: partial with the first three pages', async (t) => {
    fresh();
    google.setMode({ trouble: { kind: 'sorry_redirect' }, fromStart: 30, query: 'blocked on' });
    const outcome = await crawler.crawl(jobFor({ keyword: 'blocked on' }), { heartbeat });
    t.equal(outcome.status, 'partial');
    t.equal(outcome.exhausted, false, 'a partial crawl stopped for a failure, not for want of results');
    t.equal(outcome.pages.length, 3);
    t.same(
      outcome.pages.map((p) => p.start),
      [0, 10, 20],
    );
    t.ok(
      outcome.blocks >= 3,
      `every attempt at the fourth page was a block (${outcome.blocks} with the pages after it)`,
    );
    const organic = outcome.result?.organic_results ?? [];
    t.equal(
      organic.length,
      outcome.pages.reduce((n, p) => n + p.organicCount, 0),
      'every result of the three pages',
    );
    t.same(new Set(organic.map((r) => r.page)), new Set([1, 2, 3]));
    t.match(outcome.reason, /SERP_CRAWL_BLOCKED/);
    t.equal(rawText(outcome)?.match(/<!-- serp-page start=/g)?.length, 3, 'no block page in the raw HTML');
  });

  t.test('an origin that always blocks: failed, with no result and no raw HTML', async (t) => {
    fresh();
    google.setMode({ trouble: { kind: 'captcha' }, query: 'always blocked' });
    const outcome = await crawler.crawl(jobFor({ keyword: 'always blocked' }), { heartbeat });
    t.equal(outcome.status, 'failed');
    t.same(outcome.pages, []);
    t.equal(outcome.result, undefined);
    t.equal(rawText(outcome), undefined);
    t.equal(outcome.blocks, 3);
    t.match(outcome.reason, /captcha/);
  });

  t.test('refuses an engine_domain that is not Google without a request', async (t) => {
    fresh();
    const job = jobFor({ keyword: 'x' });
    const outcome = await crawler.crawl(
      { ...job, request: { ...job.request, engine_domain: 'example.com' } },
      { heartbeat },
    );
    t.equal(outcome.status, 'failed');
    t.match(outcome.reason, /SERP_CRAWL_BAD_REQUEST/);
    t.equal(google.requests.length, 0);
  });

  t.test('the outcome says which targeting was sent: the location resolved, explicit values winning', async (t) => {
    const short = await startFakeGoogle({
      queries: { short: ['serp/websearcher/2024-03-13_cistern_81f344a9684a.html.gz'] },
    });
    t.teardown(() => short.close());
    const { crawler: c } = httpCrawlerFor(short.origin, {
      deps: { resolveTargeting: createTargetingResolver(createLocationResolver()) },
    });
    t.teardown(() => c.close());
    const outcome = await c.crawl(
      jobFor({ keyword: 'short', location: 'germany', hl: 'en', device: 'mobile', engine_domain: 'google.de' }),
      { heartbeat },
    );
    t.equal(outcome.status, 'done');
    t.same(outcome.targeting, {
      location: 'Germany',
      gl: 'de',
      hl: 'en',
      uule: uuleForName('Germany'),
      googleDomain: 'google.de',
      device: 'mobile',
    });
    t.match(short.searches()[0]?.query, { gl: 'de', hl: 'en', uule: uuleForName('Germany') }, 'as the URL had it');

    const plain = await c.crawl(jobFor({ keyword: 'short' }), { heartbeat });
    t.same(plain.targeting, { googleDomain: 'google.com', device: 'desktop' }, 'nothing targeted: domain and device');
  });

  t.test('heartbeats during the crawl and stops when aborted', async (t) => {
    fresh();
    google.setMode({ latencyMs: 100 });
    let beats = 0;
    const controller = new AbortController();
    // page 1 is in at ~100 ms, the next window is in flight when the abort comes
    setTimeout(() => controller.abort(), 150);
    await t.rejects(
      crawler.crawl(jobFor({ keyword: 'cistern' }), { heartbeat: () => beats++, signal: controller.signal }),
      CrawlAbortedError,
    );
    t.ok(beats >= 1, `heartbeats sent (${beats})`);
    t.ok(google.searches().length < 10, 'stopped early');
    await new Promise((r) => setTimeout(r, 50));
    t.ok(
      google
        .searches()
        .filter((r) => r.query.start !== undefined && r.query.start !== '0')
        .every((r) => r.aborted),
      'the pages in flight were aborted',
    );
  });
});

/** A crawl whose every fetch answers `body` (HTTP 200), through an inline parser that counts the pages it is given. */
const crawlOf = async (t: Test, body: () => Buffer) => {
  const seen = { fetches: 0, parsed: 0 };
  const fetcher: Fetcher = {
    name: 'http',
    fetch: async (request) => {
      seen.fetches += 1;
      return {
        url: request.url,
        finalUrl: request.url,
        status: 200,
        body: body(),
        fetchedAt: new Date().toISOString(),
      };
    },
    close: async () => undefined,
  };
  const counting: PageParser = {
    read: (bytes, context, rawHead) => {
      seen.parsed += 1;
      return inlineParser.read(bytes, context, rawHead);
    },
    close: async () => undefined,
  };
  const crawler = createCrawler({
    settings: crawlerConfig({ SERP_GOOGLE_ORIGIN: 'http://127.0.0.1:9' }),
    fetchers: { http: fetcher },
    fetcherMode: 'http',
    sessions: createSessionPool(crawlerConfig()),
    parser: counting,
  });
  t.teardown(() => crawler.close());
  const outcome = await crawler.crawl(jobFor({ keyword: 'too large' }), { heartbeat: () => undefined });
  return { outcome, ...seen };
};

t.test('a page over MAX_PAGE_BYTES fails the search at once, without being parsed', async (t) => {
  const { outcome, fetches, parsed } = await crawlOf(t, () => Buffer.alloc(MAX_PAGE_BYTES + 1, 'a'));
  t.equal(outcome.status, 'failed');
  t.same(outcome.failure, { code: 'SERP_CRAWL_BAD_REQUEST', kind: 'page_too_large', httpStatus: 200 });
  t.equal(fetches, 1, 'not retried: another try gets the same page');
  t.equal(parsed, 0, 'never handed to the parser');
  t.match(
    failureDetail(outcome.failure!),
    /larger than any result page the crawler reads \(over 8 MB or 250,000 tags\); its quota was released/,
    'its owner is told why, in words',
  );
});

t.test('a page with more tags than MAX_PAGE_TAGS fails the search at once, as too large', async (t) => {
  const { outcome, fetches } = await crawlOf(t, () =>
    Buffer.from(`<html><body>${'<b>'.repeat(MAX_PAGE_TAGS + 1)}</body></html>`),
  );
  t.equal(outcome.status, 'failed');
  t.same(outcome.failure, { code: 'SERP_CRAWL_BAD_REQUEST', kind: 'page_too_large', httpStatus: 200 });
  t.equal(fetches, 1, 'not retried');
  t.match(outcome.reason, /holds more than 250000 tags/);
});
