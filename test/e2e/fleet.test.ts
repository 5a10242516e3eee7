import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { chromiumMissing, chromiumPath, signedInDashboard } from '../support/chromium.js';
import { ONE_PAGE } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { startProxies } from '../support/proxies.js';
import { pollJob, startStack, submit } from '../support/service.js';

/**
 * The default fetcher (`SERP_FETCHER=auto`) with real Chromium against the adversary (docs/fleet.md), through two
 * forward proxies: the browser passes the JavaScript challenge when it opens a route's session, the result pages go
 * over plain HTTP with the token it earned, the token expires mid-search and the browser passes the challenge again.
 * The search's cost is in its search_metadata, in /metrics and in the dashboard's routes table (a screenshot in
 * test/.artifacts/dashboard/). And when every route is banned for longer than a job may wait, the job fails
 * `no_route` with its quota released.
 */
// Chromium found as the configuration finds it; under CI its absence throws (test/support/chromium.ts)
const noBrowser = fixturesMissing() ?? chromiumMissing();
const ADMIN = 'fleet-test-admin-token-0123456789';
const SECRET = 'pr0xy-s3cret';
const SHOTS = join(import.meta.dirname, '..', '.artifacts', 'dashboard');

t.test('SERP_FETCHER=auto with Chromium against the challenge, through proxies', { skip: noBrowser }, async (t) => {
  const proxies = await startProxies(2, { credentials: { username: 'fleet', password: SECRET } });
  t.teardown(() => proxies.close());
  const { google, svc } = await startStack(t, {
    // a token is good for 3 requests: the `/` reload that earned it and 2 result pages; each route has 5 to fetch
    google: { adversary: { challenge: { requestsPerToken: 3 }, consent: true } },
    env: {
      SERP_FETCHER: 'auto',
      SERP_CHROMIUM_PATH: chromiumPath,
      SERP_PROXY_URLS: proxies.urls.join(','),
      SERP_ROUTE_MAX_RPM: '600',
      SERP_ADMIN_TOKEN: ADMIN,
    },
  });
  const { key } = (await (
    await fetch(`${svc.url}/admin/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'pro' }),
    })
  ).json()) as { key: string };
  const res = await submit(svc.url, key, { keyword: 'cistern', gl: 'de' });
  t.equal(res.status, 202);
  const { job_id: jobId } = (await res.json()) as { job_id: string };
  const done = await pollJob(svc.url, key, jobId, 'json', 400_000);
  const body = (await done.json()) as {
    search_metadata: Record<string, number | string>;
    organic_results: unknown[];
  };
  if (body.search_metadata.status !== 'done') {
    // a rare failure seen once in CI under load: say what the search ended with, and what the fake Google saw
    t.comment(`search ended: ${JSON.stringify({ ...body, organic_results: body.organic_results?.length })}`);
    t.comment(`fake Google: ${JSON.stringify(google.adversary())}; ${google.searches().length} result-page requests`);
  }
  t.equal(body.search_metadata.status, 'done', 'the search is done');
  t.equal(body.search_metadata.pages_fetched, 10, 'all ten pages');

  const stats = google.adversary()!;
  t.ok(stats.tokens >= 2, `the browser passed the challenge, then again after the token expired (${stats.tokens})`);
  t.equal(stats.consents, 0, 'gl=de never met the consent page: sessions carry the consent cookie');
  const searches = google.searches();
  const browserUa = searches.find((r) => r.headers.cookie?.includes('GSG='))?.headers['user-agent'];
  t.ok(browserUa, 'result pages carried the token');
  const served = searches.filter((r) => !r.aborted && /GSG=/.test(String(r.headers.cookie)));
  t.ok(served.length >= 10, `the ten pages went with the token (${served.length} requests)`);
  t.ok(
    searches.every((r) => proxies.addresses.includes(r.address ?? '')),
    'every request reached Google through a proxy',
  );
  t.ok(
    google.requests.some((r) => r.path === '/' && /GSG=/.test(String(r.headers.cookie))),
    "the home page's reload carried the token the browser's script set",
  );

  const meta = body.search_metadata;
  t.ok(Number(meta.blocked) >= 1, `the expired token's challenge was met (${meta.blocked} blocked)`);
  t.ok(
    Number(meta.browser_pages) >= 4,
    `the browser loaded the home page and its reload twice (${meta.browser_pages})`,
  );
  t.ok(
    Number(meta.requests) - Number(meta.browser_pages) >= 9,
    `the result pages after the first went over plain HTTP (${Number(meta.requests) - Number(meta.browser_pages)})`,
  );
  t.ok(Number(meta.bytes) > 100_000, `with the bytes they brought (${meta.bytes})`);

  const metrics = await (await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
  t.match(metrics, /serp_google_requests_total\{fetcher="browser"\} [1-9]/, '/metrics: browser requests');
  t.match(metrics, /serp_route_requests_total\{route="proxy-1"\} [1-9]/, '/metrics: requests per route');
  t.match(metrics, /serp_route_rate_rpm\{route="proxy-\d"\} \d/, "/metrics: each route's pace");
  t.match(metrics, /serp_google_requests_per_search_count 1/, '/metrics: requests per successful search');
  const service = await (
    await fetch(`${svc.url}/admin/api/service`, { headers: { authorization: `Bearer ${ADMIN}` } })
  ).text();
  for (const [name, text] of [
    ['search_metadata', JSON.stringify(body)],
    ['/metrics', metrics],
    ['the service view', service],
  ] as const) {
    t.notMatch(text, SECRET, `${name} never shows a proxy's credentials`);
  }
  const view = JSON.parse(service) as { routes: Array<{ route: string; proxy?: string; rate_rpm: number | null }> };
  t.same(
    view.routes.map((r) => r.route),
    ['proxy-1', 'proxy-2'],
    'the service view lists both routes',
  );
  t.match(view.routes[0], { proxy: /^127\.0\.0\.1:\d+$/, rate_rpm: Number });

  // the dashboard's routes table, in Chromium like the rest of the dashboard
  mkdirSync(SHOTS, { recursive: true });
  const page = await signedInDashboard(t, svc.url, ADMIN);
  await page.locator('#routes-table tbody tr').first().waitFor();
  const rows = await page.locator('#routes-table tbody tr').allTextContents();
  t.equal(rows.length, 2, 'a row per route');
  t.match(rows[0], /^proxy-1 \(127\.0\.0\.1:\d+\)\d+\.\d/, 'route, proxy and pace');
  await page.locator('#routes-table').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, '09-routes.png'), fullPage: true });
});

// the plain HTTP fetcher: no browser needed
t.test(
  'every route banned for longer than a job waits: no_route, quota released',
  { skip: fixturesMissing() },
  async (t) => {
    const proxies = await startProxies(1);
    t.teardown(() => proxies.close());
    const { svc, mintKey } = await startStack(t, {
      google: { ...ONE_PAGE, adversary: { rateLimit: { perWindow: 1, banMs: 600_000 } } },
      env: {
        SERP_PROXY_URLS: proxies.urls.join(','),
        SERP_ROUTE_MAX_RPM: '600',
        SERP_ROUTE_COOLDOWN_S: '600',
        SERP_NO_ROUTE_WAIT_S: '1',
      },
    });
    const { key } = await mintKey(['--tier', 'pro']);
    const first = (await (await submit(svc.url, key, { keyword: 'first' })).json()) as { job_id: string };
    // the second search trips the limit (more than 1 a minute): the proxy is banned for ten minutes
    const second = (await (await submit(svc.url, key, { keyword: 'second' })).json()) as { job_id: string };
    const third = (await (await submit(svc.url, key, { keyword: 'third' })).json()) as { job_id: string };
    const bodies = await Promise.all(
      [first, second, third].map(
        async (j) => (await (await pollJob(svc.url, key, j.job_id, 'json', 60_000)).json()) as Record<string, string>,
      ),
    );
    const failed = bodies.filter((b) => b.status === 'failed');
    t.ok(failed.length >= 1, `the searches after the ban fail (${failed.length})`);
    t.ok(
      failed.some((b) => /every proxy/.test(b.detail ?? '')),
      `with the no-route detail (${failed.map((b) => b.detail).join(' | ')})`,
    );
    const used = async () =>
      (
        (await (await fetch(`${svc.url}/v1/usage`, { headers: { 'x-api-key': key } })).json()) as {
          used_this_month: number;
        }
      ).used_this_month;
    let now = await used();
    for (let i = 0; i < 50 && now > 3 - failed.length; i++) {
      await new Promise((r) => setTimeout(r, 100));
      now = await used();
    }
    t.equal(now, 3 - failed.length, 'their quota was released');
  },
);
