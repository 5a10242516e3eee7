import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { openStores } from '../../services/compose/embedded/core.js';
import { chromiumMissing, signedInDashboard } from '../support/chromium.js';
import { ONE_PAGE } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { startProxies } from '../support/proxies.js';
import { checks, monitorApi } from '../support/ranks.js';
import { cli, pollJob, startService, startStack, submit } from '../support/service.js';

/**
 * Location truth through a listening port (docs/locations.md#the-check): four proxies, one of which Google places in
 * its own city for half of its searches. Every search says where Google placed it; one placed elsewhere is fetched
 * again on another route before it is served; none is served `done` or recorded by a monitor from the wrong place;
 * the route is counted in /metrics and marked on the dashboard; and `projections rebuild` gives the same read models.
 */
const ADMIN = 'location-truth-admin-token-0123456789';
const CITIES = ['Austin, Texas', 'Denver, Colorado', 'Seattle, Washington', 'Boston, Massachusetts'];
const SEARCHES = 40;
const SHOTS = join(import.meta.dirname, '..', '.artifacts', 'dashboard');

interface Native {
  search_metadata: {
    status: string;
    requests: number;
    location_check?: { status: string; requested?: string; detected?: { name: string }; retries: number };
    information: { detected_location?: { name: string; source: string } };
  };
}

t.test('location truth, end to end', { skip: fixturesMissing() }, async (t) => {
  const proxies = await startProxies(4);
  t.teardown(() => proxies.close());
  const home = proxies.addresses[1]!; // proxy-2
  const { google, svc, data } = await startStack(t, {
    google: { ...ONE_PAGE, placement: { homes: { [home]: { name: 'Chicago, Illinois', share: 0.5 } } } },
    env: { SERP_PROXY_URLS: proxies.urls.join(','), SERP_ADMIN_TOKEN: ADMIN, SERP_MONITOR_TICK_MS: '200' },
  });
  const admin = { authorization: `Bearer ${ADMIN}` };
  const { key } = (await (
    await fetch(`${svc.url}/admin/api/keys`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'enterprise' }),
    })
  ).json()) as { key: string };

  const ids: Array<{ id: string; keyword: string; city: string }> = [];
  for (let i = 0; i < SEARCHES; i++) {
    const keyword = `truth ${i}`;
    const city = CITIES[i % CITIES.length]!;
    const res = await submit(svc.url, key, { keyword, location: city, depth: 10 });
    ids.push({ id: ((await res.json()) as { job_id: string }).job_id, keyword, city });
  }
  const answers = await Promise.all(
    ids.map(async (j) => ({
      ...j,
      body: (await (await pollJob(svc.url, key, j.id, 'json', 120_000)).json()) as Native,
    })),
  );

  t.test('every search is served done from the place asked for', async (t) => {
    const wrong = answers.filter(
      (a) => a.body.search_metadata.status !== 'done' || a.body.search_metadata.location_check?.status !== 'matched',
    );
    t.same(
      wrong.map((a) => [a.keyword, a.body.search_metadata.status, a.body.search_metadata.location_check]),
      [],
    );
    for (const a of answers.slice(0, 4)) {
      t.match(a.body.search_metadata.information.detected_location, { name: a.city, source: 'ip_address' });
    }
  });

  t.test("a page placed in the proxy's city was fetched again on another route, for one request more", async (t) => {
    const atHome = google.searches().filter((r) => r.placed?.at === 'home');
    t.ok(atHome.length >= 3, `Google placed ${atHome.length} pages in Chicago`);
    t.ok(
      atHome.every((r) => r.address === home),
      'only through proxy-2',
    );
    const retried = answers.filter((a) => a.body.search_metadata.location_check?.retries === 1);
    t.same(
      new Set(retried.map((a) => a.keyword)),
      new Set(atHome.map((r) => r.query.q)),
      'exactly those searches were retried',
    );
    for (const a of retried) t.equal(a.body.search_metadata.requests, 2, `${a.keyword}: two Google requests`);
    const requests = google.searches().filter((r) => r.query.q?.startsWith('truth ')).length;
    console.log(`# ${requests} Google requests for ${SEARCHES} searches: ${(requests / SEARCHES).toFixed(3)} each`);
    t.equal(requests, SEARCHES + atHome.length, 'one more request per page placed elsewhere, no other');
  });

  t.test('compat: search_information.detected_location and search_metadata.location_check', async (t) => {
    const res = await fetch(`${svc.url}/v1/search/${ids[0]!.id}?output=compat`, { headers: { 'x-api-key': key } });
    const body = (await res.json()) as Record<string, Record<string, unknown>>;
    t.same(body.search_information?.detected_location, { name: 'Austin, Texas', source: 'ip_address' });
    t.match(body.search_metadata?.location_check, { status: 'matched', requested: 'Austin,Texas,United States' });
  });

  t.test('the route is counted in /metrics and marked on the dashboard', async (t) => {
    const metrics = await (await fetch(`${svc.url}/metrics`, { headers: admin })).text();
    t.match(metrics, /serp_location_checks_total\{route="proxy-2",status="mismatched"\} [1-9]/);
    t.match(metrics, /serp_location_checks_total\{route="proxy-1",status="matched"\} [1-9]/);
    t.notMatch(metrics, /serp_location_checks_total\{route="proxy-[134]",status="mismatched"\}/);
    // what the checks taught the dispatcher: proxy-2 is set aside for United States cities, the others are not
    t.match(metrics, /serp_route_place_avoided\{route="proxy-2",country="United States",level="city"\} 1/);
    t.notMatch(metrics, /serp_route_place_avoided\{route="proxy-[134]",[^}]*\} 1/);
    t.match(metrics, /serp_route_place_honour_ratio\{route="proxy-1",country="United States",level="city"\} 1\n/);
    const view = (await (await fetch(`${svc.url}/admin/api/service`, { headers: admin })).json()) as {
      routes: Array<{
        route: string;
        placed_last_hour: number;
        misplaced_last_hour: number;
        places_elsewhere: boolean;
      }>;
    };
    t.same(
      view.routes.map((r) => [r.route, r.places_elsewhere]),
      [
        ['proxy-1', false],
        ['proxy-2', true],
        ['proxy-3', false],
        ['proxy-4', false],
      ],
      'proxy-2 keeps placing searches in its own city',
    );
    const two = view.routes.find((r) => r.route === 'proxy-2')!;
    t.ok(two.misplaced_last_hour >= 3 && two.misplaced_last_hour <= two.placed_last_hour);
  });

  t.test('the dashboard marks the route, in Chromium', { skip: chromiumMissing() }, async (t) => {
    const page = await signedInDashboard(t, svc.url, ADMIN);
    await page.locator('#routes-table tbody tr.misplacing').first().waitFor();
    const marked = await page.locator('#routes-table tbody tr.misplacing').allTextContents();
    t.equal(marked.length, 1, 'one route marked');
    t.match(marked[0], /^proxy-2 .*\d+ of \d+places searches elsewhere: drop it for local work/);
    const others = await page.locator('#routes-table tbody tr:not(.misplacing)').allTextContents();
    t.same(
      others.map((r) => r.slice(0, 7)),
      ['proxy-1', 'proxy-3', 'proxy-4'],
    );
    mkdirSync(SHOTS, { recursive: true });
    await page.locator('#routes-table').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, '10-routes-placed-elsewhere.png'), fullPage: true });
  });

  t.test('placed elsewhere on every route: partial with the note, and a monitor records a failure', async (t) => {
    google.setPlacement({
      homes: Object.fromEntries(proxies.addresses.map((a) => [a, { name: 'Chicago, Illinois', share: 1 }])),
    });
    const res = await submit(svc.url, key, { keyword: 'truth everywhere', location: 'Austin, Texas', depth: 10 });
    const { job_id: jobId } = (await res.json()) as { job_id: string };
    const body = (await (await pollJob(svc.url, key, jobId)).json()) as Native;
    t.equal(body.search_metadata.status, 'partial');
    t.match(body.search_metadata.location_check, {
      status: 'mismatched',
      detected: { name: 'Chicago, Illinois' },
      retries: 1,
      reason: /^location_mismatch: Google placed this search in "Chicago, Illinois"/,
    });

    const api = monitorApi(svc.url, key);
    const created = await api.call('POST', '/monitors', {
      name: 'truth',
      keywords: ['truth monitor'],
      domains: ['merriam-webster.com'],
      location: 'Austin, Texas',
      depth: 10,
      schedule: 'daily',
    });
    t.equal(created.status, 201);
    const points = await api.waitForHistory(created.json.monitor_id, (p) => checks(p) >= 1);
    t.match(points, [{ status: 'failed', position: null, failure: 'location_mismatch' }], 'never a position');
    const changes = await api.call('GET', `/monitors/${created.json.monitor_id}/changes`);
    t.same(changes.json.changes, [], 'no change from a failure');
    const metrics = await (await fetch(`${svc.url}/metrics`, { headers: admin })).text();
    t.match(metrics, /serp_location_mismatched_searches_total\{route="proxy-\d"\} [1-9]/);
  });

  t.test('projections rebuild gives the same read models', async (t) => {
    await svc.stop();
    const dump = () => {
      const stores = openStores(data);
      const out = stores.readModels.dump();
      void stores.close();
      return out;
    };
    const before = dump();
    t.ok(
      before.some((d) => d.view === 'routeHealth' && d.doc.includes('"misplaced"')),
      'the routes kept their placements',
    );
    t.ok(
      before.some((d) => d.view === 'routePlacements' && d.doc.includes('"proxy-2"')),
      "the places kept their routes' records",
    );
    await cli(['projections', 'rebuild', '--data', data]);
    t.same(dump(), before, 'byte for byte');
    // the teardown stops what runs: a service again on the rebuilt data, answering as before
    const again = await startService(data, { SERP_GOOGLE_ORIGIN: google.origin, SERP_ADMIN_TOKEN: ADMIN });
    t.teardown(() => again.stop());
    const res = await fetch(`${again.url}/v1/search/${ids[0]!.id}?output=json`, { headers: { 'x-api-key': key } });
    t.match(((await res.json()) as Native).search_metadata.location_check, { status: 'matched' });
  });
});
