import t from 'tap';
import { createTargetingResolver } from '../../services/crawler/targeting.js';
import { judgeWith } from '../../services/geo/locationCheck.js';
import { createLocationResolver } from '../../services/geo/locations.js';
import { httpCrawlerFor, jobFor } from '../support/crawlerHarness.js';
import { ONE_PAGE, startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { startProxies } from '../support/proxies.js';

const skip = fixturesMissing();
const heartbeat = () => undefined;

/**
 * Where Google placed each page, checked as the crawl takes it (docs/locations.md#the-retry), against the fake Google
 * placing searches by their uule, or in a proxy's home city.
 */
t.test('placement › through proxies', { skip }, async (t) => {
  const google = await startFakeGoogle({ ...ONE_PAGE, queries: { deep: [] } });
  const proxies = await startProxies(2);
  const locations = createLocationResolver();
  t.teardown(async () => {
    await Promise.all([google.close(), proxies.close()]);
    locations.close();
  });
  const [first, second] = proxies.addresses;
  const crawlerWith = () => {
    const { crawler, sessions } = httpCrawlerFor(google.origin, {
      env: { SERP_PROXY_URLS: proxies.urls.join(',') },
      deps: {
        resolveTargeting: createTargetingResolver(locations),
        judgeLocation: judgeWith({ resolve: (name) => locations.resolveLocation(name) }),
      },
    });
    t.teardown(() => crawler.close());
    return { crawler, sessions };
  };
  const searchesOf = (q: string) => google.searches().filter((r) => r.query.q === q);

  t.test('placed elsewhere on one route: fetched again on the other, and done', async (t) => {
    google.setPlacement({ homes: { [first!]: { name: 'Chicago, Illinois', share: 1 } } });
    const { crawler } = crawlerWith();
    const outcome = await crawler.crawl(jobFor({ keyword: 'again', location: 'Austin, Texas', depth: 10 }), {
      heartbeat,
    });
    t.equal(outcome.status, 'done');
    t.match(outcome.locationCheck, {
      status: 'matched',
      requested: 'Austin,Texas,United States',
      detected: { name: 'Austin, Texas', source: 'ip_address' },
      detectedPlace: 'Austin,Texas,United States',
      retries: 1,
      placements: [
        { route: 'proxy-1', start: 0, status: 'mismatched', detected: 'Chicago, Illinois' },
        { route: 'proxy-2', start: 0, status: 'matched', detected: 'Austin, Texas' },
      ],
    });
    const asked = searchesOf('again');
    t.same(
      asked.map((r) => [r.address, r.placed?.at]),
      [
        [first, 'home'],
        [second, 'uule'],
      ],
      "two Google requests: the first placed at the proxy's home, the retry by its uule",
    );
    t.equal(outcome.cost?.requests, 2, 'the retry is one more Google request');
    t.same(outcome.result?.information.detected_location, { name: 'Austin, Texas', source: 'ip_address' });
  });

  t.test('placed elsewhere on every route: partial, with the location_mismatch note', async (t) => {
    google.setPlacement({
      homes: {
        [first!]: { name: 'Chicago, Illinois', share: 1 },
        [second!]: { name: 'United States', share: 1 },
      },
    });
    const { crawler } = crawlerWith();
    const outcome = await crawler.crawl(jobFor({ keyword: 'everywhere', location: 'Austin, Texas', depth: 30 }), {
      heartbeat,
    });
    t.equal(outcome.status, 'partial');
    t.equal(outcome.pages.length, 1, 'no page past the misplaced one');
    t.equal(searchesOf('everywhere').length, 2, 'the first page and its retry, nothing more');
    t.ok(outcome.result && outcome.result.organic_results.length > 0, 'what Google gave is kept, flagged');
    t.match(outcome.locationCheck, {
      status: 'country_only',
      detected: { name: 'United States' },
      retries: 1,
      reason:
        /^location_mismatch: Google placed this search in "United States" \(its country only\), not in Austin,Texas,United States, also on another route/,
    });
    t.match(outcome.reason, /^location_mismatch/);
    t.equal(outcome.exhausted, false, 'never a cache answer for deeper searches');
  });

  t.test("the place's record advises: an avoided route is not taken, nor is it for the retry", async (t) => {
    google.setPlacement({ homes: { [first!]: { name: 'Chicago, Illinois', share: 1 } } });
    const { crawler } = crawlerWith();
    for (const keyword of ['advised a', 'advised b', 'advised c']) {
      const outcome = await crawler.crawl(
        { ...jobFor({ keyword, location: 'Austin, Texas', depth: 10 }), routes: { avoid: ['proxy-1'] } },
        { heartbeat },
      );
      t.match(outcome.locationCheck, { status: 'matched', retries: 0, placements: [{ route: 'proxy-2' }] }, keyword);
    }
    const explored = await crawler.crawl(
      { ...jobFor({ keyword: 'explored', location: 'Austin, Texas', depth: 10 }), routes: { prefer: 'proxy-1' } },
      { heartbeat },
    );
    t.match(
      explored.locationCheck,
      {
        status: 'matched',
        retries: 1,
        placements: [
          { route: 'proxy-1', status: 'mismatched' },
          { route: 'proxy-2', status: 'matched' },
        ],
      },
      'the route set aside is tried again, and its miss retried elsewhere',
    );
  });

  t.test('a search without a location is judged unverified, and never retried', async (t) => {
    google.setPlacement({ homes: { [first!]: { name: 'Chicago, Illinois', share: 1 } } });
    const { crawler } = crawlerWith();
    const outcome = await crawler.crawl(jobFor({ keyword: 'nowhere', depth: 10 }), { heartbeat });
    t.equal(outcome.status, 'done');
    t.match(outcome.locationCheck, {
      status: 'unverified',
      reason: 'no location was asked for',
      detected: { name: 'Chicago, Illinois' },
      retries: 0,
    });
    t.equal(searchesOf('nowhere').length, 1);
  });

  t.test('a page that says nothing: unverified, taken as it is', async (t) => {
    google.setPlacement({});
    const { crawler } = crawlerWith();
    // the fixture page keeps its own line when the request carries no uule the fake can name: a uule by coordinates
    const outcome = await crawler.crawl(jobFor({ keyword: 'point', lat: 30.2672, lon: -97.7431, depth: 10 }), {
      heartbeat,
    });
    t.equal(outcome.status, 'done');
    t.match(outcome.locationCheck, { status: 'unverified', reason: /coordinates/, retries: 0 });
  });
});

t.test('placement › one route: the retry goes on a new session', { skip }, async (t) => {
  const google = await startFakeGoogle({ ...ONE_PAGE });
  const locations = createLocationResolver();
  t.teardown(async () => {
    await google.close();
    locations.close();
  });
  const { crawler } = httpCrawlerFor(google.origin, {
    deps: {
      resolveTargeting: createTargetingResolver(locations),
      judgeLocation: judgeWith({ resolve: (name) => locations.resolveLocation(name) }),
    },
  });
  t.teardown(() => crawler.close());
  // a first search earns the direct route's session a cookie
  await crawler.crawl(jobFor({ keyword: 'warm', depth: 10 }), { heartbeat });
  google.setPlacement({ homes: { '127.0.0.1': { name: 'Chicago, Illinois', share: 0.5 } } });
  google.requests.length = 0;
  const outcome = await crawler.crawl(jobFor({ keyword: 'alone', location: 'Austin, Texas', depth: 10 }), {
    heartbeat,
  });
  const asked = google.searches().filter((r) => r.query.q === 'alone');
  t.same(
    asked.map((r) => r.placed?.at),
    ['home', 'uule'],
    'the home city won the first time; the retry was placed by its uule',
  );
  t.match(String(asked[0]?.headers.cookie), /NID=/, "the first on the route's session, with its cookie");
  t.notMatch(String(asked[1]?.headers.cookie ?? ''), /NID=/, 'the retry on a new session: a fresh visitor');
  t.equal(outcome.status, 'done');
  t.match(outcome.locationCheck, { status: 'matched', retries: 1 });
});

t.test('placement › a crawler without a judge checks nothing', { skip }, async (t) => {
  const google = await startFakeGoogle({ ...ONE_PAGE });
  t.teardown(() => google.close());
  const { crawler } = httpCrawlerFor(google.origin);
  t.teardown(() => crawler.close());
  const outcome = await crawler.crawl(jobFor({ keyword: 'plain', depth: 10 }), { heartbeat });
  t.equal(outcome.status, 'done');
  t.equal(outcome.locationCheck, undefined);
});
