import t, { type Test } from 'tap';
import { createJetStreamEventStore } from '../../services/adapters/eventStore/jetstream.js';
import { startLocalCluster } from '../../services/cli/dev/cluster.js';
import { chromiumMissing } from '../support/chromium.js';
import { startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { natsConnect, natsUnavailable } from '../support/nats.js';
import { checks, monitorApi } from '../support/ranks.js';
import { cliArgs, removeDir, startStack, tempDataDir, UNPACED } from '../support/service.js';

/**
 * A monitor with pixel positions (docs/rank-tracking.md) through the real service and real Chromium: the fake Google
 * answers the keyword's first search with a page where Wikipedia is the first result (on the first screen) and its
 * second with one where Wikipedia is sixth (below it). The points carry `pixels_from_top` and `above_the_fold`,
 * visibility its above-the-fold share, and the second run raises `fell_below_fold`: embedded, and on a cluster whose
 * dispatcher lays the page out from the object store (the checks in the log carry the fold).
 */
const KEYWORD = 'fold keyword';
const PAGES = [
  'serp/websearcher/2024-03-13_oscar-the-grouch_7d621e868493.html.gz', // en.wikipedia.org first
  'serp/websearcher/2024-03-13_define-judgement_4f4d0fed0592.html.gz', // en.wikipedia.org sixth
];

/** the monitor, its two runs and what they recorded, on the service at `base` */
const exercise = async (t: Test, base: string, key: string) => {
  const api = monitorApi(base, key);
  const created = await api.call('POST', '/monitors', {
    name: 'fold',
    keywords: [KEYWORD],
    domains: ['*.wikipedia.org'],
    depth: 10,
    schedule: 'daily',
    pixel_positions: true,
    alerts: { fell_below_fold: true },
  });
  t.equal(created.status, 201, `created: ${created.text.slice(0, 120)}`);
  t.equal(created.json.pixel_positions, true, 'the monitor answers its setting');
  t.same(created.json.alerts, { fell_below_fold: true }, 'and the alert it raises');
  const id = created.json.monitor_id as string;

  const first = await api.waitForHistory(id, (p) => checks(p) >= 1);
  t.match(
    first,
    [{ status: 'ranked', position: 1, above_the_fold: true, pixels_from_top: Number }],
    'the first search: first result, on the first screen',
  );
  t.ok(first[0]!.pixels_from_top! < 768, `its top within the desktop screen (${first[0]!.pixels_from_top} px)`);

  t.equal((await api.call('POST', `/monitors/${id}/runs`, {})).status, 202, 'a second run');
  const both = await api.waitForHistory(id, (p) => checks(p) >= 2);
  t.match(
    both[1],
    { status: 'ranked', position: 6, above_the_fold: false, pixels_from_top: Number },
    'the second search: sixth, below the first screen',
  );
  t.ok(both[1]!.pixels_from_top! >= 768, `its top below the fold (${both[1]!.pixels_from_top} px)`);

  let alerts: Array<{ kind: string; keyword: string; domain: string; from_position: number; to_position: number }> = [];
  for (let i = 0; i < 300 && alerts.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    alerts = (await api.call('GET', `/monitors/${id}/alerts`)).json.alerts;
  }
  t.match(
    alerts,
    [{ kind: 'fell_below_fold', keyword: KEYWORD, domain: '*.wikipedia.org', from_position: 1, to_position: 6 }],
    'the second run raised fell_below_fold',
  );

  const visibility = (await api.call('GET', `/monitors/${id}/visibility`)).json;
  const day = visibility.domains[0].days.at(-1);
  t.match(day, { keywords: 1, above_the_fold: 0, above_the_fold_share: 0 }, "the day's last search: none above");

  const csv = await api.call('GET', `/monitors/${id}/history?format=csv`);
  t.equal(csv.status, 200, 'the CSV still answers');
};

t.test(
  'a monitor with pixel_positions records the fold and alerts when it falls below',
  { skip: fixturesMissing() ?? chromiumMissing() },
  async (t) => {
    const stack = await startStack(t, {
      google: { queries: { [KEYWORD]: PAGES }, rotate: true },
      env: { SERP_MONITOR_TICK_MS: '200', SERP_MONITOR_SPREAD_MAX_S: '2', SERP_DRAIN_TIMEOUT_MS: '1000' },
    });
    const { key } = await stack.mintKey(['--tier', 'pro']);
    await exercise(t, stack.svc.url, key);
  },
);

t.test(
  'distributed: the dispatcher lays the page out from the object store',
  { skip: natsUnavailable() ?? fixturesMissing() ?? chromiumMissing(), timeout: 600_000 },
  async (t) => {
    const google = await startFakeGoogle({ queries: { [KEYWORD]: PAGES }, rotate: true });
    const dir = tempDataDir('serp-fold-cluster');
    const cluster = await startLocalCluster({
      dir,
      log: () => undefined,
      apis: 1,
      crawlers: 1,
      env: {
        SERP_GOOGLE_ORIGIN: google.origin,
        SERP_FETCHER: 'http',
        ...UNPACED,
        SERP_LOG_LEVEL: 'warn',
        SERP_MONITOR_TICK_MS: '200',
        SERP_MONITOR_SPREAD_MAX_S: '2',
      },
      command: [process.execPath, ...cliArgs],
    });
    const es = await createJetStreamEventStore({ nc: await natsConnect(cluster.nats.urls), ownsConnection: true });
    t.teardown(async () => {
      await es.close();
      await cluster.stop();
      await google.close();
      removeDir(dir);
    });
    const base = cluster.apiUrls[0]!;
    const minted = await fetch(`${base}/admin/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cluster.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'pro', label: 'fold cluster' }),
    });
    t.equal(minted.status, 201, 'a key minted');
    const { key } = (await minted.json()) as { key: string };
    await exercise(t, base, key);
    // the fold is in the log: the checks carry it, so a rebuild of any node's read models gives it back
    const folds = (await es.readAll({ fromPosition: 0, maxCount: 100_000 }))
      .filter((e) => e.type === 'MonitorKeywordChecked')
      .map((e) => (e.data as { ranks: Array<{ aboveTheFold?: boolean }> }).ranks[0]?.aboveTheFold);
    t.same(folds, [true, false], 'the checks in the log carry the fold');
  },
);
