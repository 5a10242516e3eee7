import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import t from 'tap';
import { streams } from '../../contracts/events.js';
import { allProjections, readModelQueries } from '../../projections/index.js';
import { createJetStreamEventStore } from '../../services/adapters/eventStore/jetstream.js';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';
import { auditUsage } from '../../services/application/audit.js';
import { createCommandHandler } from '../../services/application/commandHandler.js';
import { type ClusterProcess, startLocalCluster } from '../../services/cli/dev/cluster.js';
import { createProjector } from '../../services/projector/projector.js';
import { BACKGROUND_NICE } from '../../services/threads/nice.js';
import { startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { natsConnect, natsUnavailable } from '../support/nats.js';
import { cliArgs, pollJob, removeDir, submit, tempDataDir, UNPACED } from '../support/service.js';

/**
 * Distributed mode end to end (docs/distributed.md#tested-on-a-real-three-node-cluster): a real three-node nats-server
 * cluster (JetStream, sync_interval: always, replicas 3) and real processes of `serp-api serve --role …`: 2 api, 2
 * crawlers, two dispatchers and a projector, all on loopback, against the fake Google origin. Faults are real: kill -9
 * of a crawler mid-job, kill -9 and restart of a NATS node under load.
 */
const unavailable = natsUnavailable() ?? fixturesMissing('serp');
if (unavailable) {
  t.plan(0, unavailable);
} else {
  t.setTimeout(600_000);
  const google = await startFakeGoogle({ latencyMs: 250 });
  const dir = tempDataDir('serp-cluster');
  const problems: string[] = [];
  const cluster = await startLocalCluster({
    dir,
    log: (line) => {
      if (!/^\[n\d\]/.test(line) && /"level":(50|60)|Error|error:/.test(line)) problems.push(line.slice(0, 2000));
    },
    apis: 2,
    crawlers: 2,
    env: {
      SERP_GOOGLE_ORIGIN: google.origin,
      SERP_FETCHER: 'http',
      ...UNPACED,
      SERP_QUEUE_ACK_WAIT_MS: '3000',
      SERP_CRAWLER_CONCURRENCY: '4',
      SERP_LOG_LEVEL: 'warn',
    },
    // the sources, or the build the test runner made for this run (support/service.ts cliEntry)
    command: [process.execPath, ...cliArgs],
  });
  // a second dispatcher: the design says running two is safe (idempotent enqueues), so every case below runs with two
  await cluster.add('dispatcher', 'dispatcher-2');
  const es = await createJetStreamEventStore({ nc: await natsConnect(cluster.nats.urls), ownsConnection: true });
  t.teardown(async () => {
    if (problems.length) console.error(`# process errors:\n${problems.slice(0, 20).join('\n')}`);
    await es.close();
    await cluster.stop();
    await google.close();
    removeDir(dir);
  });
  const [A, B] = cluster.apiUrls;
  const admin = (url: string, path: string, body?: unknown) =>
    fetch(`${url}/admin/api${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${cluster.adminToken}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const mint = async (body: Record<string, unknown>) => {
    const res = await admin(A, '/keys', { label: `e2e-${randomBytes(3).toString('hex')}`, ...body });
    if (res.status !== 201 && res.status !== 200) throw new Error(`mint: ${res.status} ${await res.text()}`);
    return (await res.json()) as { key: string; key_id: string };
  };
  /** B projects the new key within moments: wait until it accepts it */
  const acceptedOn = async (url: string, key: string) => {
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const res = await fetch(`${url}/v1/usage`, { headers: { 'x-api-key': key } });
      await res.arrayBuffer();
      if (res.status === 200) return true;
      await new Promise((r) => setTimeout(r, 25));
    }
    return false;
  };
  const eventsOf = async (jobId: string) => (await es.readStream(streams.searchJob(jobId))).events;
  const uniq = (what: string) => `${what} ${randomBytes(4).toString('hex')}`;
  const charged = new Map<string, number>();
  /** reservations of submits answered 503, whose job may not exist: the audit reports them, within its grace */
  const unacknowledged = new Map<string, number>();

  t.test('submit on api A, poll on api B: the same finished result', async (t) => {
    const { key, key_id } = await mint({ tier: 'pro' });
    const res = await submit(A, key, { keyword: uniq('espresso') });
    t.ok(res.ok, `submit on A: ${res.status}`);
    const { job_id } = (await res.json()) as { job_id: string };
    charged.set(key_id, 1);
    const onB = await pollJob(B, key, job_id);
    t.equal(onB.status, 200, 'B answers 200 for the job A took');
    const bodyB = (await onB.json()) as { search_metadata: { status: string }; organic_results: unknown[] };
    t.equal(bodyB.search_metadata.status, 'done');
    t.ok(bodyB.organic_results.length >= 90, `${bodyB.organic_results.length} organic results`);
    const bodyA = (await (await pollJob(A, key, job_id)).json()) as { organic_results: unknown[] };
    t.same(bodyA.organic_results, bodyB.organic_results, 'A serves the same result');
    const raw = await fetch(`${B}/v1/search/${job_id}?output=html`, { headers: { 'x-api-key': key } });
    const link = ((await raw.json()) as { html_url: string }).html_url;
    const page = await fetch(link);
    t.equal(page.status, 200, 'the raw HTML a crawler put in the object store is served by B');
    t.ok((await page.arrayBuffer()).byteLength > 100_000);
  });

  t.test(
    'the api processes answer at the host’s priority; every other role’s process runs below them, all its threads',
    { skip: process.platform !== 'linux' ? 'nice values are per thread on Linux only' : false },
    async (t) => {
      /** a thread's nice value (proc(5): the 19th field of its stat) */
      const niceAt = (stat: string) => Number(readFileSync(stat, 'utf8').split(') ').at(-1)!.split(' ')[16]);
      const threadsOf = (pid: number) =>
        readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
          try {
            return [niceAt(`/proc/${pid}/task/${tid}/stat`)];
          } catch {
            return []; // the thread ended
          }
        });
      for (const p of cluster.processes) {
        const pid = p.child?.pid;
        if (pid === undefined) continue;
        const mainNice = niceAt(`/proc/${pid}/stat`);
        if (p.roles === 'api') {
          t.equal(mainNice, getPriority(), `${p.name}: its event loop at the host's priority, as this test's`);
        } else {
          const nices = threadsOf(pid);
          t.ok(nices.length >= 4, `${p.name}: ${nices.length} threads`);
          t.same(
            [...new Set(nices)],
            [BACKGROUND_NICE],
            `${p.name} (${p.roles}): every thread at nice ${BACKGROUND_NICE}`,
          );
        }
      }
    },
  );

  t.test('an api process, which holds no queue, reports its depth from JetStream', async (t) => {
    const { key, key_id } = await mint({ tier: 'pro' });
    charged.set(key_id, 24);
    // a burst the two crawlers (4 slots each) cannot take at once: some of it waits in the queue
    const ids = await Promise.all(
      Array.from({ length: 24 }, async (_, i) => {
        const res = await submit(i % 2 ? A : B, key, { keyword: uniq('queued') });
        return ((await res.json()) as { job_id: string }).job_id;
      }),
    );
    let deepest = 0;
    const view = async () =>
      ((await (await admin(A, '/service')).json()) as { queue: { pending: number; in_flight: number } | null }).queue;
    const during = Date.now() + 10_000;
    while (Date.now() < during) {
      const q = await view();
      if (!q) {
        t.fail('the queue is read');
        break;
      }
      deepest = Math.max(deepest, q.pending + q.in_flight);
      if (deepest > 8) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    t.ok(deepest > 8, `more jobs waiting or held than the crawlers' 8 slots at once: ${deepest}`);
    for (const id of ids) t.equal((await pollJob(A, key, id)).status, 200);
    t.same(await view(), { pending: 0, in_flight: 0 }, 'and none once every job is done');
    const metrics = await (
      await fetch(`${B}/metrics`, { headers: { authorization: `Bearer ${cluster.adminToken}` } })
    ).text();
    t.match(metrics, /serp_queue_depth\{state="pending"\} 0/, 'the metrics of the other api say the same');
    t.match(metrics, /serp_queue_depth\{state="in_flight"\} 0/);
  });

  t.test('a key minted on api A is accepted by api B on its very first request', async (t) => {
    for (let i = 0; i < 3; i++) {
      const { key } = await mint({ tier: 'free' });
      const res = await fetch(`${B}/v1/usage`, { headers: { 'x-api-key': key } });
      t.equal(res.status, 200, `key ${i}: ${await res.text()}`);
    }
  });

  t.test('kill -9 a crawler mid-job: every job completes exactly once', async (t) => {
    const { key, key_id } = await mint({ tier: 'pro' });
    const jobs: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await submit(i % 2 ? A : B, key, { keyword: uniq('killed crawler') });
      t.ok(res.ok, `submit ${i}: ${res.status}${res.ok ? '' : ` ${await res.clone().text()}`}`);
      jobs.push(((await res.json()) as { job_id: string }).job_id);
    }
    charged.set(key_id, 6);
    // find a crawler holding a job right now, by the worker id its CrawlStarted names (crawler-<pid>-…)
    let victim: ClusterProcess | undefined;
    let victimJob: string | undefined;
    const deadline = Date.now() + 20_000;
    while (!victim && Date.now() < deadline) {
      for (const job of jobs) {
        const evs = await eventsOf(job);
        const started = evs.find((e) => e.type === 'CrawlStarted');
        if (!started || evs.some((e) => e.type === 'CrawlCompleted')) continue;
        const pid = Number(/^crawler-(\d+)-/.exec((started.data as { worker: string }).worker)?.[1]);
        victim = cluster.processes.find((p) => p.roles === 'crawler' && p.child?.pid === pid);
        victimJob = job;
        if (victim) break;
      }
      if (!victim) await new Promise((r) => setTimeout(r, 20));
    }
    t.ok(victim, `caught ${victim?.name} mid-job (${victimJob})`);
    if (!victim || !victimJob) return;
    await cluster.kill(victim, 'SIGKILL');
    for (const job of jobs) {
      const res = await pollJob(A, key, job, 'json', 120_000);
      t.equal(res.status, 200, `job ${job} finished`);
      await res.arrayBuffer();
    }
    for (const job of jobs) {
      const evs = await eventsOf(job);
      t.equal(evs.filter((e) => e.type === 'CrawlCompleted').length, 1, `${job}: one CrawlCompleted`);
    }
    const started = (await eventsOf(victimJob)).filter((e) => e.type === 'CrawlStarted');
    t.ok(started.length >= 2, `the killed crawler's job was taken again (attempts: ${started.length})`);
    const usage = (await (await fetch(`${B}/v1/usage`, { headers: { 'x-api-key': key } })).json()) as {
      used_this_month: number;
    };
    t.equal(usage.used_this_month, 6, 'six searches charged once each');
    await cluster.restart(victim);
  });

  t.test('revoked on api A: refused on api B within one second', async (t) => {
    const { key, key_id } = await mint({ tier: 'free' });
    t.ok(await acceptedOn(B, key), 'B accepts the new key');
    const revoked = await admin(A, `/keys/${key_id}/revoke`, {});
    t.equal(revoked.status, 200, 'revoked on A');
    const t0 = Date.now();
    let status = 0;
    while (Date.now() - t0 < 5_000) {
      const res = await fetch(`${B}/v1/usage`, { headers: { 'x-api-key': key } });
      await res.arrayBuffer();
      status = res.status;
      if (status === 401) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const took = Date.now() - t0;
    t.equal(status, 401, 'B refuses the key');
    t.ok(took < 1_000, `within ${took} ms`);
  });

  t.test('200 concurrent submits through both apis against a quota of 50 accept exactly 50', async (t) => {
    const { key, key_id } = await mint({ tier: 'free', monthly_quota: 50, rate_limit_per_min: 1000 });
    t.ok(await acceptedOn(B, key));
    const statuses = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const res = await submit(i % 2 ? A : B, key, { keyword: uniq('quota race'), async: true });
        await res.arrayBuffer();
        return res.status;
      }),
    );
    const ok = statuses.filter((s) => s >= 200 && s < 300).length;
    t.equal(ok, 50, 'exactly the quota');
    const others = [...new Set(statuses.filter((s) => s >= 300))];
    t.same(others, [429], `the rest are refused with 429, no 5xx (${others.join(', ')})`);
    charged.set(key_id, 50);
  });

  t.test('a NATS node killed and restarted under load: no acknowledged job lost, none charged twice', async (t) => {
    const { key, key_id } = await mint({ tier: 'pro', rate_limit_per_min: 100_000 });
    t.ok(await acceptedOn(B, key));
    const accepted: string[] = [];
    const refused: number[] = [];
    let stop = false;
    let restarted = false;
    let acceptedAfterRestart = 0;
    // one page per search: what is tested is the log and the queue through the node's loss, not the crawl
    const load = (async () => {
      for (let i = 0; !stop; i++) {
        try {
          const res = await submit(i % 2 ? A : B, key, { keyword: uniq('node restart'), depth: 10 });
          const body = (await res.json()) as { job_id?: string };
          if (res.ok && body.job_id) {
            accepted.push(body.job_id);
            if (restarted) acceptedAfterRestart++;
          } else {
            refused.push(res.status);
            // a client honours Retry-After; a short pause keeps the test quick
            await new Promise((r) => setTimeout(r, 100));
          }
        } catch {
          refused.push(0);
        }
      }
    })();
    await new Promise((r) => setTimeout(r, 1_000));
    // the event log's stream leader: its loss forces a re-election under the writers
    const nc = await natsConnect(cluster.nats.urls);
    const leader = (await (await jetstreamManager(nc)).streams.info('SERP_EVENTS')).cluster?.leader;
    await nc.close();
    const victim = Math.max(
      0,
      cluster.nats.nodes.findIndex((n) => n.name === leader),
    );
    t.comment(`killing ${cluster.nats.nodes[victim].name}, leader of SERP_EVENTS`);
    const before = accepted.length;
    await cluster.nats.stopNode(victim, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 3_000));
    await cluster.nats.startNode(victim);
    restarted = true;
    const back = Date.now();
    const deadline = Date.now() + 30_000;
    while (acceptedAfterRestart < 10 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    t.comment(`ten submits acknowledged ${((Date.now() - back) / 1000).toFixed(1)} s after the node restarted`);
    stop = true;
    await load;
    const loadEnded = Date.now();
    t.comment(
      `acknowledged: ${before} before the kill, ${accepted.length - before} after, ${acceptedAfterRestart} once the node was back`,
    );
    t.ok(acceptedAfterRestart >= 10, 'submits are acknowledged again once the node is back');
    t.ok(
      accepted.length > 10,
      `${accepted.length} submits acknowledged, ${refused.length} refused (${[...new Set(refused)].join(',') || 'none'})`,
    );
    t.notOk(
      refused.some((s) => s !== 503 && s !== 0),
      'a submit refused while the cluster re-elects gets 503 (retry), never another error',
    );
    for (const job of accepted) {
      const res = await pollJob(A, key, job, 'json', 180_000);
      t.equal(res.status, 200, `job ${job} finished`);
      await res.arrayBuffer();
    }
    t.comment(`every acknowledged job finished ${((Date.now() - loadEnded) / 1000).toFixed(1)} s after the load ended`);
    // a submit answered 503 may still have reserved (its outcome was unknown to the api): never one acknowledged
    // job reserved twice, every acknowledged job reserved once, and no more strays than 503s
    const month = new Date().toISOString().slice(0, 7).replace('-', '');
    const reserved = new Map<string, number>();
    for (const e of (await es.readStream(streams.usage(key_id, month))).events) {
      if (e.type !== 'QuotaReserved') continue;
      const job = (e.data as { jobId: string }).jobId;
      reserved.set(job, (reserved.get(job) ?? 0) + 1);
    }
    t.ok(
      [...reserved.values()].every((n) => n === 1),
      'no job reserved twice',
    );
    t.ok(
      accepted.every((j) => reserved.get(j) === 1),
      'every acknowledged job reserved exactly once',
    );
    const strays = [...reserved.keys()].filter((j) => !accepted.includes(j));
    t.ok(
      strays.length <= refused.length,
      `${strays.length} reservations of unacknowledged submits (${refused.length} 503s)`,
    );
    const usage = (await (await fetch(`${A}/v1/usage`, { headers: { 'x-api-key': key } })).json()) as {
      used_this_month: number;
    };
    t.ok(
      usage.used_this_month >= accepted.length,
      `usage ${usage.used_this_month} covers the ${accepted.length} acknowledged`,
    );
    charged.set(key_id, usage.used_this_month);
    unacknowledged.set(key_id, strays.length);
  });

  t.test('audit usage over the cluster agrees with what was charged', async (t) => {
    const readDir = tempDataDir('serp-audit');
    const readModels = createSqliteReadModelStore(join(readDir, 'read.db'));
    const projector = createProjector({ eventStore: es, readModels, projections: allProjections });
    await projector.start();
    t.teardown(async () => {
      await projector.stop();
      readModels.close();
      removeDir(readDir);
    });
    const month = new Date().toISOString().slice(0, 7).replace('-', '');
    const audits = await auditUsage({
      eventStore: es,
      queries: readModelQueries(readModels),
      handle: createCommandHandler(es),
      month,
      caughtUp: (position) => projector.waitFor(position),
    });
    for (const [keyId, n] of charged) {
      const a = audits.find((x) => x.keyId === keyId);
      t.ok(a, `audited ${keyId}`);
      if (!a) continue;
      t.equal(a.reserved - a.released, n, `${keyId}: ${n} charged`);
      t.equal(a.projected, n, `${keyId}: the projection agrees`);
      t.same(
        a.discrepancies.filter((d) => d.kind !== 'reservation-without-job'),
        [],
        `${keyId}: no discrepancy`,
      );
      t.ok(
        a.discrepancies.length <= (unacknowledged.get(keyId) ?? 0),
        `${keyId}: ${a.discrepancies.length} reservations without a job, all from submits answered 503`,
      );
    }
  });
}
