import t from 'tap';
import { classifyPage } from '../../parser/index.js';
import { createHttpFetcher } from '../../services/adapters/fetcher/http.js';
import { type AdversaryRequest, createAdversary, tokenFor } from '../support/adversary.js';
import { httpCrawlerFor, jobFor } from '../support/crawlerHarness.js';
import { ONE_PAGE, startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { startProxies } from '../support/proxies.js';

const UA = 'Mozilla/5.0 test';
const SHELL = '<html><body><noscript>/httpservice/retry/enablejs</noscript><script>old()</script></body></html>';

/** the adversary on a fake clock */
const adversaryAt = (options: Parameters<typeof createAdversary>[0]) => {
  let clock = 0;
  const a = createAdversary({ ...options, now: () => clock }, () => SHELL);
  const ask = (r: Partial<AdversaryRequest> = {}) =>
    a.judge({
      address: '127.0.0.2',
      path: '/search',
      query: new URLSearchParams('q=x'),
      cookie: '',
      userAgent: UA,
      ...r,
    });
  const tick = (ms: number) => {
    clock += ms;
  };
  return { a, ask, tick };
};

/** what the challenge page's script computes in a browser */
const answer = (page: string, userAgent = UA) => {
  const nonce = /var n="([0-9a-f]+)"/.exec(page)?.[1] ?? '';
  return `GSG=${nonce}.${tokenFor(nonce, userAgent)}`;
};

t.test(
  'the challenge: a token only a script computes, bound to the address and user agent, that expires',
  async (t) => {
    const { a, ask, tick } = adversaryAt({ challenge: { requestsPerToken: 3, tokenTtlMs: 60_000 } });
    const first = ask();
    t.equal(first.kind, 'challenge', 'no token: the challenge page');
    const page = first.kind === 'challenge' ? first.page : '';
    t.notMatch(page, /old\(\)/, "the real challenge page's own scripts are gone");
    t.match(page, /crypto\.subtle\.digest\("SHA-256"/, 'its script computes the token with Web Crypto');
    t.match(page, /httpservice\/retry\/enablejs/, 'and it is still the page the parser knows');
    t.equal(ask({ cookie: 'GSG=made.up' }).kind, 'challenge', 'a made-up token is refused');
    const cookie = answer(page);
    t.equal(ask({ cookie, userAgent: 'another browser' }).kind, 'challenge', 'for another user agent it is refused');
    const again = ask();
    const token = answer(again.kind === 'challenge' ? again.page : '');
    t.equal(ask({ cookie: token, address: '127.0.0.3' }).kind, 'challenge', 'and from another address');
    t.same(
      [1, 2, 3].map(() => ask({ cookie: token }).kind),
      ['pass', 'pass', 'pass'],
      'the answer passes, for 3 requests',
    );
    t.equal(ask({ cookie: token }).kind, 'challenge', 'then the token has expired');
    const later = ask();
    const fresh = answer(later.kind === 'challenge' ? later.page : '');
    t.equal(ask({ cookie: fresh }).kind, 'pass');
    tick(60_000);
    t.equal(ask({ cookie: fresh }).kind, 'challenge', 'and a token older than its life is refused too');
    t.match(a.stats(), { tokens: 2, withToken: 4 });
  },
);

t.test('the rate limit: more than R a window is a ban, doubled by every request made during it', async (t) => {
  const { a, ask, tick } = adversaryAt({ rateLimit: { perWindow: 3, windowMs: 10_000, banMs: 1_000 } });
  t.same(
    [1, 2, 3].map(() => ask().kind),
    ['pass', 'pass', 'pass'],
  );
  t.equal(ask().kind, 'sorry', 'the fourth in the window trips the ban');
  t.equal(ask({ address: '127.0.0.3' }).kind, 'pass', 'another address is not banned');
  tick(900);
  t.equal(ask().kind, 'sorry', 'asking during the ban: still banned, and the ban is now 2 s from here');
  tick(1_900);
  t.equal(ask().kind, 'sorry', 'and again: 4 s from here');
  tick(3_900);
  t.equal(ask({ path: '/sorry/index' }).kind, 'sorry', 'the CAPTCHA page itself does not extend it');
  tick(200);
  t.equal(ask().kind, 'pass', 'after the ban ends the address is served again');
  t.match(a.stats().byAddress['127.0.0.2'], { bans: 1, whileBanned: 3, requests: 8 });
});

t.test('consent for the EU, 5xx and hangs', async (t) => {
  const { a, ask } = adversaryAt({ consent: true });
  t.equal(ask({ query: new URLSearchParams('q=x&gl=de') }).kind, 'consent', 'gl=de without consent');
  t.equal(ask({ query: new URLSearchParams('q=x&gl=DE'), cookie: 'SOCS=abc' }).kind, 'pass', 'with SOCS');
  t.equal(ask({ query: new URLSearchParams('q=x&gl=us') }).kind, 'pass', 'outside the EU');
  t.equal(a.stats().consents, 1);
  const flaky = adversaryAt({ flaky: { errorRate: 0.1, hangRate: 0.05, seed: 7 } });
  const kinds = Array.from({ length: 1000 }, () => flaky.ask().kind);
  const errors = kinds.filter((k) => k === 'error').length;
  const hangs = kinds.filter((k) => k === 'hang').length;
  t.ok(errors > 70 && errors < 130, `about 10 % answered 5xx (${errors})`);
  t.ok(hangs > 25 && hangs < 75, `about 5 % never answered (${hangs})`);
  const twin = adversaryAt({ flaky: { errorRate: 0.1, hangRate: 0.05, seed: 7 } });
  t.same(
    Array.from({ length: 1000 }, () => twin.ask().kind),
    kinds,
    'the same seed, the same run',
  );
});

t.test('through the forward proxies, against the fake Google', { skip: fixturesMissing() }, async (t) => {
  const onePage = ONE_PAGE;

  t.test('the origin sees one client per proxy, and a plain HTTP client never passes the challenge', async (t) => {
    const google = await startFakeGoogle({ ...onePage, adversary: { challenge: {} } });
    const proxies = await startProxies(3, { credentials: { username: 'user', password: 's3cret' } });
    t.teardown(async () => {
      await proxies.close();
      await google.close();
    });
    const http = createHttpFetcher();
    for (const proxyUrl of proxies.urls) {
      const page = await http.fetch({
        url: `${google.origin}/search?q=x`,
        device: 'desktop',
        session: { id: 's', proxyUrl, userAgent: UA, cookies: '' },
        captureAio: false,
        timeoutMs: 5_000,
      });
      t.equal(classifyPage(page.body.toString()), 'js_challenge', 'a client that runs no script gets the challenge');
    }
    t.same(
      google.requests.map((r) => r.address).sort(),
      proxies.addresses,
      'each proxy reached the origin from its own address',
    );
    t.same(proxies.stats().carried, [1, 1, 1]);
    const { crawler } = httpCrawlerFor(google.origin, { env: { SERP_PROXY_URLS: proxies.urls.join(',') } });
    const outcome = await crawler.crawl(jobFor({ keyword: 'cistern' }), { heartbeat: () => undefined });
    t.equal(outcome.status, 'failed', 'an http-only crawler fails against the challenge');
    t.match(outcome.failure, { kind: 'js_challenge' });
    t.equal(google.adversary()?.tokens, 0, 'no token was ever earned');
    t.ok((outcome.cost?.blocked ?? 0) >= 3, `every attempt met it (${outcome.cost?.blocked})`);
    t.notMatch(JSON.stringify(outcome.cost), /s3cret|user:/, "the cost names routes, never a proxy's credentials");
    t.match(outcome.cost?.routes[0], { route: /^proxy-\d$/, proxy: /^127\.0\.0\.1:\d+$/ });
  });

  t.test('pacing keeps every route under the limit where unpaced routes get banned', async (t) => {
    // 20 a minute, as a 6 s window of 2: a route paced at 18 a minute never trips it, an unpaced one does at once
    const adversary = { rateLimit: { perWindow: 2, windowMs: 6_000, banMs: 3_000 } };
    const run = async (paced: boolean) => {
      const google = await startFakeGoogle({ ...onePage, adversary });
      const proxies = await startProxies(2);
      t.teardown(async () => {
        await proxies.close();
        await google.close();
      });
      const { crawler } = httpCrawlerFor(google.origin, {
        env: {
          SERP_PROXY_URLS: proxies.urls.join(','),
          SERP_ROUTE_COOLDOWN_S: '3',
          SERP_ROUTE_COOLDOWN_MAX_S: '12',
          ...(paced ? { SERP_ROUTE_MAX_RPM: '18' } : {}),
        },
        limits: { maxAttemptsPerPage: 2, backoffBaseMs: 50, backoffMaxMs: 200 },
      });
      const outcomes = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          crawler.crawl(jobFor({ keyword: `paced ${i}` }), { heartbeat: () => undefined }),
        ),
      );
      return { outcomes, stats: google.adversary()! };
    };
    const paced = await run(true);
    t.same(
      paced.outcomes.map((o) => o.status),
      Array.from({ length: 6 }, () => 'done'),
      'paced: every search done',
    );
    t.match(paced.stats, { bans: 0, whileBanned: 0, requests: 6 }, 'paced: one request each, no ban');
    t.same(
      paced.outcomes.map((o) => o.cost?.requests),
      [1, 1, 1, 1, 1, 1],
      'the cost of each is one Google request',
    );
    t.ok(
      paced.outcomes.every((o) => o.cost?.routes[0]?.rpm === 18),
      'the routes are paced at 18 a minute, and say so',
    );
    const unpaced = await run(false);
    t.ok(unpaced.stats.bans > 0, `unpaced: routes banned (${unpaced.stats.bans} bans)`);
    t.ok(
      unpaced.stats.requests > 6,
      `and more requests than searches (${unpaced.stats.requests}, ${unpaced.stats.whileBanned} to a banned address)`,
    );
  });

  t.test('the consent page is never met: sessions carry the answer a person gives it', async (t) => {
    const google = await startFakeGoogle({ ...onePage, adversary: { consent: true } });
    t.teardown(() => google.close());
    const { crawler } = httpCrawlerFor(google.origin);
    const outcome = await crawler.crawl(jobFor({ keyword: 'cistern', gl: 'de' }), { heartbeat: () => undefined });
    t.equal(outcome.status, 'done');
    t.equal(google.adversary()?.consents, 0);
    t.match(google.searches()[0]?.headers.cookie, /SOCS=/);
  });
});
