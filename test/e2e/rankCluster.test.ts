import { join } from 'node:path';
import t from 'tap';
import { createJetStreamEventStore } from '../../services/adapters/eventStore/jetstream.js';
import { startLocalCluster } from '../../services/cli/dev/cluster.js';
import { startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { natsConnect, natsUnavailable } from '../support/nats.js';
import { checks, monitorApi } from '../support/ranks.js';
import { cliArgs, removeDir, tempDataDir, UNPACED } from '../support/service.js';

/**
 * Rank tracking on the three-node cluster (docs/rank-tracking.md): real nats-server nodes and `serp-api serve --role`
 * processes, two of them dispatchers, each running the monitor scheduler. A monitor created on api A runs its first
 * slot once: one MonitorRunStarted for the slot and one job per keyword in the log, however many dispatchers saw
 * it; the history read on api B has one point per keyword × domain of that slot.
 */
const unavailable = natsUnavailable() ?? fixturesMissing('serp');
const KEYWORDS = ['cluster rank one', 'cluster rank two', 'cluster rank three', 'cluster rank four'];
const DOMAINS = ['merriam-webster.com', '*.wikipedia.org'];

t.test(
  'two dispatchers, one slot: one run, one job per keyword',
  { skip: unavailable, timeout: 600_000 },
  async (t) => {
    const google = await startFakeGoogle({});
    const dir = tempDataDir('serp-rank-cluster');
    const cluster = await startLocalCluster({
      dir,
      log: () => undefined,
      apis: 2,
      crawlers: 1,
      env: {
        SERP_GOOGLE_ORIGIN: google.origin,
        SERP_FETCHER: 'http',
        ...UNPACED,
        SERP_LOG_LEVEL: 'warn',
        SERP_MONITOR_TICK_MS: '200',
        SERP_MONITOR_SPREAD_MAX_S: '4',
      },
      command: [process.execPath, ...cliArgs],
    });
    await cluster.add('dispatcher', 'dispatcher-2');
    const es = await createJetStreamEventStore({ nc: await natsConnect(cluster.nats.urls), ownsConnection: true });
    t.teardown(async () => {
      await es.close();
      await cluster.stop();
      await google.close();
      removeDir(dir);
    });
    const [A, B] = cluster.apiUrls;
    const minted = await fetch(`${A}/admin/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cluster.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'pro', label: 'rank cluster' }),
    });
    t.equal(minted.status, 201, 'a key minted on A');
    const { key } = (await minted.json()) as { key: string };
    const created = await monitorApi(A, key).call('POST', '/monitors', {
      name: 'cluster',
      keywords: KEYWORDS,
      domains: DOMAINS,
      schedule: 'hourly',
    });
    t.equal(created.status, 201, created.text.slice(0, 200));
    const id = created.json.monitor_id as string;

    const onB = monitorApi(B, key);
    // B serves the monitor once its projector has it
    const deadline = Date.now() + 30_000;
    while ((await onB.call('GET', `/monitors/${id}`)).status !== 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
    }
    const points = await onB.waitForHistory(id, (p) => checks(p) >= KEYWORDS.length, 240_000);
    // a few more ticks of both dispatchers on the same slot: nothing more may start
    await new Promise((r) => setTimeout(r, 3000));

    const events = await es.readAll({ fromPosition: 0, maxCount: 100_000 });
    const starts = events.filter(
      (e) => e.type === 'MonitorRunStarted' && (e.data as { monitorId: string; trigger: string }).monitorId === id,
    );
    const submitted = events
      .filter((e) => e.type === 'SearchSubmitted')
      .map((e) => e.data as { jobId: string; request: { keyword: string }; monitor?: { monitorId: string } })
      .filter((d) => d.monitor?.monitorId === id);
    t.equal(starts.length, 1, 'one run started for the slot, with two dispatchers');
    t.equal(submitted.length, KEYWORDS.length, 'one job submitted per keyword');
    t.same(new Set(submitted.map((s) => s.request.keyword)), new Set(KEYWORDS), 'each keyword once');
    t.equal(new Set(submitted.map((s) => s.jobId)).size, KEYWORDS.length, 'distinct job ids');
    t.equal(checks(points), KEYWORDS.length, 'B’s history: one search per keyword');
    t.equal(points.length, KEYWORDS.length * DOMAINS.length, 'one point per keyword × domain');
    t.same(new Set(points.map((p) => p.job_id)), new Set(submitted.map((s) => s.jobId)), 'the points are those jobs');
  },
);
