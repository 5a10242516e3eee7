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
  for (let i = 0; i < 6; i++) {
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

  const later = await cluster.add('api', 'api-late');
  const deadline = Date.now() + 60_000;
  let caughtUp = await routesOf(later.url);
  while (JSON.stringify(caughtUp) !== JSON.stringify(routes) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    caughtUp = await routesOf(later.url);
  }
  t.same(caughtUp, routes, 'an api built from the log alone shows the same placements');
  t.same(await Promise.all(jobs.map((id) => answer(later.url, id))), first, 'and the same location checks');
});
