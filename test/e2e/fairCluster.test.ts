import t from 'tap';
import { createJetStreamEventStore } from '../../services/adapters/eventStore/jetstream.js';
import { startLocalCluster } from '../../services/cli/dev/cluster.js';
import { startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { natsConnect, natsUnavailable } from '../support/nats.js';
import { cliArgs, removeDir, tempDataDir, UNPACED } from '../support/service.js';

/**
 * Fair share on the three-node cluster (docs/fleet.md#lanes-and-fair-share): real nats-server nodes and `serp-api
 * serve --role` processes, two dispatchers (each running the fair scheduler over the shared log) and two crawlers
 * (each with slots per lane, taking jobs from the lanes' JetStream consumers). One key's backlog of top-100 searches
 * on api A, another key's one-page search on api B: it ends while most of the backlog waits. Every job of both keys,
 * and of a bulk backlog beside them, is crawled exactly once: two dispatchers never put a job out twice.
 */
const unavailable = natsUnavailable() ?? fixturesMissing('serp');

t.test(
  'two dispatchers, two crawlers: the same fairness, every job once',
  { skip: unavailable, timeout: 600_000 },
  async (t) => {
    const google = await startFakeGoogle({ latencyMs: 150 });
    const dir = tempDataDir('serp-fair-cluster');
    const cluster = await startLocalCluster({
      dir,
      log: () => undefined,
      apis: 2,
      crawlers: 2,
      env: {
        SERP_GOOGLE_ORIGIN: google.origin,
        SERP_FETCHER: 'http',
        ...UNPACED,
        SERP_LOG_LEVEL: 'warn',
        SERP_CRAWLER_CONCURRENCY: '2',
        SERP_ROUTE_MAX_IN_FLIGHT: '3',
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
    const [A, B] = cluster.apiUrls as [string, string];
    const mint = async (label: string) => {
      const res = await fetch(`${A}/admin/api/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${cluster.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tier: 'enterprise', label }),
      });
      return ((await res.json()) as { key: string }).key;
    };
    const a = await mint('backlog');
    const b = await mint('agent');
    const post = (url: string, key: string, body: unknown, query = '') =>
      fetch(`${url}/v1/search${query}`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    // B's key must be known on api B before its search (a new key reaches every api within seconds)
    for (let i = 0; i < 100 && (await fetch(`${B}/v1/usage`, { headers: { 'x-api-key': b } })).status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }

    const backlog: string[] = [];
    for (let i = 0; i < 24; i++) {
      const res = await post(A, a, { keyword: `cluster backlog ${i}`, no_cache: true });
      backlog.push(((await res.json()) as { job_id: string }).job_id);
    }
    const bulk: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await post(A, a, { keyword: `cluster bulk ${i}`, no_cache: true, priority: 'bulk' });
      bulk.push(((await res.json()) as { job_id: string }).job_id);
    }

    const res = await post(B, b, { keyword: 'cluster agent', depth: 10, async: false }, '?output=json');
    t.equal(res.status, 200, "B's one-page search answered");
    const meta = ((await res.json()) as { search_metadata: Record<string, unknown> }).search_metadata;
    t.match(meta, { status: 'done', lane: 'live', queued_ms: Number }, 'done in the live lane');
    const open = await Promise.all(
      backlog.map(async (id) => (await fetch(`${A}/v1/search/${id}`, { headers: { 'x-api-key': a } })).status),
    );
    const waiting = open.filter((s) => s === 202).length;
    t.ok(waiting >= 12, `it ended while ${waiting} of the 24 backlog searches had not`);

    // everything ends, each job crawled once
    const all = [...backlog, ...bulk];
    const deadline = Date.now() + 300_000;
    let ended = new Set<string>();
    const endedOfAll = () => all.filter((id) => ended.has(id)).length;
    while (endedOfAll() < all.length && Date.now() < deadline) {
      const events = await es.readAll({ fromPosition: 0, maxCount: 1_000_000 });
      ended = new Set(
        events.filter((e) => e.type === 'CrawlCompleted').map((e) => (e.data as { jobId: string }).jobId),
      );
      if (endedOfAll() < all.length) await new Promise((r) => setTimeout(r, 1000));
    }
    t.equal(endedOfAll(), all.length, 'every job of the backlog and the bulk lane done');
    const events = await es.readAll({ fromPosition: 0, maxCount: 1_000_000 });
    const starts = new Map<string, number>();
    for (const e of events) {
      if (e.type !== 'CrawlStarted') continue;
      const id = (e.data as { jobId: string }).jobId;
      starts.set(id, (starts.get(id) ?? 0) + 1);
    }
    const twice = all.filter((id) => (starts.get(id) ?? 0) !== 1);
    t.same(twice, [], 'each started once: two dispatchers put no job out twice');
  },
);
