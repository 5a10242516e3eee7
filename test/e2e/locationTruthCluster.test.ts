import t from 'tap';
import { startLocalCluster } from '../../services/cli/dev/cluster.js';
import { ONE_PAGE, startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { natsUnavailable } from '../support/nats.js';
import { startProxies } from '../support/proxies.js';
import { cliArgs, pollJob, removeDir, submit, tempDataDir, UNPACED } from '../support/service.js';

/**
 * Location truth in distributed mode (docs/locations.md#the-check): the crawler role judges with its own geotargets,
 * a search placed elsewhere is fetched again on the other proxy, and the routes' placements are a projection of the
 * log: an api started afterwards, catching up from JetStream, answers exactly as the first.
 */
const unavailable = natsUnavailable() ?? fixturesMissing('serp');

t.test('location truth on a cluster', { skip: unavailable ?? false, timeout: 300_000 }, async (t) => {
  const proxies = await startProxies(2);
  const google = await startFakeGoogle({
    ...ONE_PAGE,
    placement: { homes: { [proxies.addresses[0]!]: { name: 'Chicago, Illinois', share: 1 } } },
  });
  const dir = tempDataDir('serp-location-cluster');
  const cluster = await startLocalCluster({
    dir,
    log: () => undefined,
    natsNodes: 1,
    apis: 1,
    crawlers: 1,
    env: {
      SERP_GOOGLE_ORIGIN: google.origin,
      SERP_FETCHER: 'http',
      SERP_PROXY_URLS: proxies.urls.join(','),
      ...UNPACED,
      SERP_LOG_LEVEL: 'warn',
    },
    command: [process.execPath, ...cliArgs],
  });
  t.teardown(async () => {
    await cluster.stop();
    await Promise.all([google.close(), proxies.close()]);
    removeDir(dir);
  });
  const [A] = cluster.apiUrls as [string];
  const admin = { authorization: `Bearer ${cluster.adminToken}` };
  const { key } = (await (
    await fetch(`${A}/admin/api/keys`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'pro' }),
    })
  ).json()) as { key: string };

  const jobs: string[] = [];
  for (let i = 0; i < 8; i++) {
    const res = await submit(A, key, { keyword: `cluster truth ${i}`, location: 'Denver, Colorado', depth: 10 });
    jobs.push(((await res.json()) as { job_id: string }).job_id);
  }
  type Meta = { status: string; location_check?: { status: string; retries: number } };
  const answer = async (base: string, id: string) =>
    ((await (await pollJob(base, key, id, 'json', 120_000)).json()) as { search_metadata: Meta }).search_metadata;
  const first = await Promise.all(jobs.map((id) => answer(A, id)));
  t.same(
    first.map((m) => [m.status, m.location_check?.status]),
    jobs.map(() => ['done', 'matched']),
    'every search done, placed where asked',
  );
  t.ok(
    first.some((m) => m.location_check?.retries === 1),
    'the ones placed in Chicago through proxy-1 were fetched again on proxy-2',
  );
  const metrics = await (await fetch(`${A}/metrics`, { headers: admin })).text();
  t.match(metrics, /serp_location_checks_total\{route="proxy-1",status="mismatched"\} [1-9]/);

  const routesOf = async (base: string) =>
    (
      (await (await fetch(`${base}/admin/api/service`, { headers: admin })).json()) as {
        routes: Array<{
          route: string;
          placed_last_hour: number;
          misplaced_last_hour: number;
          places_elsewhere: boolean;
        }>;
      }
    ).routes.map(({ route, placed_last_hour, misplaced_last_hour, places_elsewhere }) => ({
      route,
      placed_last_hour,
      misplaced_last_hour,
      places_elsewhere,
    }));
  const routes = await routesOf(A);
  t.match(routes, [
    { route: 'proxy-1', places_elsewhere: true },
    { route: 'proxy-2', places_elsewhere: false },
  ]);

  await t.test('the routes’ records drive dispatch: proxy-1 is set aside for Denver’s searches', async (t) => {
    const text = await (await fetch(`${A}/metrics`, { headers: admin })).text();
    t.match(text, /serp_route_place_avoided\{route="proxy-1",country="United States",level="city"\} 1/);
    t.match(text, /serp_route_place_avoided\{route="proxy-2",country="United States",level="city"\} 0/);
    const before = google.searches().length;
    const later: Meta[] = [];
    // one at a time, each after the last ended: the dispatcher reads the records as the log has them then
    for (let i = 0; i < 8; i++) {
      const res = await submit(A, key, { keyword: `cluster learnt ${i}`, location: 'Denver, Colorado', depth: 10 });
      later.push(await answer(A, ((await res.json()) as { job_id: string }).job_id));
    }
    const sent = google.searches().slice(before);
    t.same(
      later.map((m) => [m.status, m.location_check?.status, m.location_check?.retries]),
      later.map(() => ['done', 'matched', 0]),
      'every search placed where asked at the first request',
    );
    t.equal(sent.filter((r) => r.address === proxies.addresses[0]).length, 0, 'none went through proxy-1');
    t.equal(sent.length, 8, 'one Google request a search');
    const places = (
      (await (await fetch(`${A}/admin/api/service`, { headers: admin })).json()) as {
        routes: Array<{ route: string; places: Array<{ country: string; level: string; avoided: boolean }> }>;
      }
    ).routes.map((r) => [r.route, r.places.map((p) => [p.country, p.level, p.avoided])]);
    t.same(places, [
      ['proxy-1', [['United States', 'city', true]]],
      ['proxy-2', [['United States', 'city', false]]],
    ]);
  });

  const settled = await routesOf(A);
  const later = await cluster.add('api', 'api-late');
  const deadline = Date.now() + 60_000;
  let caughtUp = await routesOf(later.url);
  while (JSON.stringify(caughtUp) !== JSON.stringify(settled) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    caughtUp = await routesOf(later.url);
  }
  t.same(caughtUp, settled, 'an api built from the log alone shows the same placements');
  t.same(await Promise.all(jobs.map((id) => answer(later.url, id))), first, 'and the same location checks');
});
