/**
 * Distributed mode at scale (docs/benchmarks.md#distributed-mode), on a real three-node nats-server cluster on
 * loopback. Three comparisons, each of the same work on both sides, sides alternated round by round, no ratio when a
 * side had a failure (compare.ts):
 *
 * 1. Crawl throughput by crawler processes at the same total concurrency: N crawler processes at 2 requests each
 *    (N = 2, 4: 4 and 8 requests in flight) against one crawler process at 2N, the same jobs from the fake origin
 *    with a fixed latency per page. More requests in flight alone would show the same speed-up, so the baseline has
 *    them too: the ratio is what spreading them over processes adds. Pages come from each job's metadata
 *    (`pages_fetched`), and a job that did not end done is counted as a failure, never as done. One process at 2 is
 *    printed as the starting point.
 * 2. The API's submits per second: distributed (two api processes, JetStream R3) against embedded (`serp-api serve`,
 *    SQLite), the same fsync'd submit path and the same client load (64 in flight); each round's cluster is started
 *    for its run and stopped before the embedded run, so neither side shares the cores with the other.
 * 3. Event-store appends per second: JetStream (R3, sync_interval: always) against the embedded SQLite store
 *    (synchronous=FULL, group commit), 64 appends in flight to distinct streams, with only the nats-server nodes up.
 *
 * Run: npx tsx test/bench/scale.ts [jobsPerRound] [rounds]
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createJetStreamEventStore } from '../../services/adapters/eventStore/jetstream.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { type LocalCluster, startLocalCluster } from '../../services/cli/dev/cluster.js';
import { startNatsServers } from '../../services/cli/dev/natsServer.js';
import type { EventStore } from '../../services/ports/eventStore.js';
import { startFakeGoogle } from '../support/fakeGoogle.js';
import { natsConnect } from '../support/nats.js';
import { cli, removeDir, startService, submit, tempDataDir, UNPACED } from '../support/service.js';
import { alternate, type Figure, jobOutcome, machineNote, printRatio, total } from './compare.js';

const jobsPerRound = Number(process.argv[2] ?? 16);
const rounds = Number(process.argv[3] ?? 2);
const LATENCY_MS = 200;
const PER_PROCESS = 2;
const google = await startFakeGoogle({ latencyMs: LATENCY_MS });
const base = tempDataDir('serp-scale');
const fmt = (n: number) => n.toFixed(1);
let clusters = 0;

const inParallel = async <T>(n: number, width: number, fn: (i: number) => Promise<T>) => {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await fn(i);
      }
    }),
  );
  return out;
};

/** a cluster of its own data directory, with no crawler yet (crawl rounds add theirs) */
const startCluster = (crawlers: number) =>
  startLocalCluster({
    dir: join(base, `cluster-${++clusters}`),
    apis: 2,
    crawlers,
    env: {
      SERP_GOOGLE_ORIGIN: google.origin,
      SERP_FETCHER: 'http',
      ...UNPACED,
      SERP_CRAWLER_CONCURRENCY: String(PER_PROCESS),
      SERP_LOG_LEVEL: 'warn',
    },
    command: [process.execPath, '--import', 'tsx', join(process.cwd(), 'services', 'cli', 'main.ts')],
  });

const stopCluster = async (cluster: LocalCluster) => {
  await Promise.all(cluster.processes.map((p) => cluster.kill(p)));
  await cluster.stop();
};

const mint = async (url: string, token: string) => {
  const res = await fetch(`${url}/admin/api/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tier: 'enterprise', label: 'scale', rate_limit_per_min: 100_000_000 }),
  });
  return ((await res.json()) as { key: string }).key;
};

// 1. crawl throughput: N processes at 2 each against one process at 2N
const crawl = async () => {
  const cluster = await startCluster(0);
  try {
    const [A, B] = cluster.apiUrls as [string, string];
    const key = await mint(A, cluster.adminToken);
    await new Promise((r) => setTimeout(r, 500));
    /** replaces the cluster's crawlers with `processes` of `concurrency` each */
    const crawlers = async (processes: number, concurrency: number) => {
      await Promise.all(cluster.processes.filter((p) => p.roles === 'crawler').map((p) => cluster.kill(p, 'SIGTERM')));
      await Promise.all(
        Array.from({ length: processes }, () =>
          cluster.add('crawler', undefined, { SERP_CRAWLER_CONCURRENCY: String(concurrency) }),
        ),
      );
    };
    let n = 0;
    /** one round of jobs through the crawlers the cluster has now: pages per second, jobs not done as failures */
    const round = async (): Promise<Figure & { pages: number; seconds: number }> => {
      const batch = ++n;
      const t0 = Date.now();
      const jobs = await inParallel(jobsPerRound, 16, async (i) => {
        const res = await submit(i % 2 ? A : B, key, {
          keyword: `scale ${batch} ${i} ${randomBytes(3).toString('hex')}`,
        });
        return ((await res.json()) as { job_id: string }).job_id;
      });
      let pages = 0;
      let failures = 0;
      for (const job of jobs) {
        const outcome = await jobOutcome(A, key, job, 600_000);
        pages += outcome.pages;
        if (!outcome.done) failures += 1;
      }
      const seconds = (Date.now() - t0) / 1000;
      return { value: pages / seconds, failures, pages, seconds };
    };
    const show = (label: string, f: Figure & { pages: number; seconds: number }) =>
      `${label}: ${f.pages} pages in ${fmt(f.seconds)} s = ${fmt(f.value)} pages/s${f.failures ? ` (${f.failures} jobs not done)` : ''}`;

    console.log(
      `\ncrawl: ${jobsPerRound} jobs of 10 pages per round, ${LATENCY_MS} ms per page, ${rounds} rounds; ${machineNote()}`,
    );
    await crawlers(1, PER_PROCESS);
    const start = await round();
    console.log(`  ${show(`1 process at ${PER_PROCESS}`, start)}`);
    for (const [i, processes] of [2, 4].entries()) {
      const inFlight = processes * PER_PROCESS;
      const sides = await alternate(
        rounds,
        {
          spread: async () => {
            await crawlers(processes, PER_PROCESS);
            return round();
          },
          one: async () => {
            await crawlers(1, inFlight);
            return round();
          },
        },
        (r, f) => {
          console.log(`  round ${r + 1}, ${show(`${processes} processes at ${PER_PROCESS}`, f.spread)}`);
          console.log(`  round ${r + 1}, ${show(`1 process at ${inFlight}`, f.one)}`);
        },
        i,
      );
      const [spread, one] = [total(sides.spread), total(sides.one)];
      printRatio(
        `  ${inFlight} requests in flight: ${processes} processes / 1 process, pages per second`,
        { value: spread.value / rounds, failures: spread.failures },
        { value: one.value / rounds, failures: one.failures },
        [`${processes} processes`, '1 process'],
      );
      printRatio(
        `  ${processes} processes at ${PER_PROCESS} / 1 process at ${PER_PROCESS}, pages per second`,
        { value: spread.value / rounds, failures: spread.failures },
        start,
        [`${processes} processes`, '1 process'],
      );
    }
  } finally {
    await stopCluster(cluster);
  }
};

// 2. submits per second: distributed against embedded, never both up at once
const SUBMITS = 1000;
const submitRate = async (urls: string[], k: string): Promise<Figure & { accepted: number }> => {
  const t0 = Date.now();
  const statuses = await inParallel(SUBMITS, 64, async (i) => {
    const res = await fetch(`${urls[i % urls.length]}/v1/search`, {
      method: 'POST',
      headers: { 'x-api-key': k, 'content-type': 'application/json' },
      // async submits of fresh keywords: the fsync'd path (reserve + submit), no crawl waited for
      body: JSON.stringify({ keyword: `rate ${i} ${randomBytes(4).toString('hex')}` }),
    });
    await res.arrayBuffer();
    return res.status;
  });
  const accepted = statuses.filter((s) => s === 202 || s === 200).length;
  return { value: accepted / ((Date.now() - t0) / 1000), failures: SUBMITS - accepted, accepted };
};
const submits = async () => {
  // crawling the submitted jobs is not what is measured, on either side: the origin holds every page for minutes
  // from here on, so crawls wait on sockets and take no CPU from the submit path
  google.setMode({ latencyMs: 600_000 });
  const sides = await alternate(rounds, {
    distributed: async () => {
      const cluster = await startCluster(1);
      try {
        const key = await mint(cluster.apiUrls[0]!, cluster.adminToken);
        await new Promise((r) => setTimeout(r, 500));
        return await submitRate(cluster.apiUrls, key);
      } finally {
        await stopCluster(cluster);
      }
    },
    embedded: async () => {
      const data = tempDataDir('serp-scale-embedded');
      const embedded = await startService(data, {
        SERP_GOOGLE_ORIGIN: google.origin,
        SERP_CRAWLER_CONCURRENCY: String(PER_PROCESS),
      });
      try {
        const key = JSON.parse(
          await cli(['keys', 'create', '--tier', 'enterprise', '--rate', '100000000', '--json', '--data', data]),
        ).key;
        return await submitRate([embedded.url], key);
      } finally {
        await embedded.kill();
        removeDir(data);
      }
    },
  });
  console.log(`\nsubmits (${SUBMITS}, 64 in flight, fresh keywords), ${rounds} rounds, first side alternated:`);
  sides.embedded.forEach((emb, i) => {
    const dist = sides.distributed[i]!;
    console.log(
      `  round ${i + 1}: embedded (one process, SQLite) ${fmt(emb.value)}/s (${emb.accepted} accepted); distributed (2 api, JetStream R3) ${fmt(dist.value)}/s (${dist.accepted} accepted)`,
    );
  });
  const [dist, emb] = [total(sides.distributed), total(sides.embedded)];
  printRatio('  distributed / embedded submits per second', dist, emb, ['distributed', 'embedded']);
};

// 3. event-store appends per second, only the nats-server nodes up
const APPENDS = 3000;
const appendRate = async (store: EventStore): Promise<Figure> => {
  const t0 = Date.now();
  const results = await inParallel(APPENDS, 64, (i) =>
    store
      .appendToStream(`bench-${i}-${randomBytes(3).toString('hex')}`, [{ type: 'Bench', data: { i } }], {
        expectedVersion: 'no_stream',
      })
      .then(
        () => true,
        () => false,
      ),
  );
  const ok = results.filter(Boolean).length;
  return { value: ok / ((Date.now() - t0) / 1000), failures: APPENDS - ok };
};
const appends = async () => {
  const nats = await startNatsServers({ count: 3, dir: join(base, 'nats-appends') });
  const js = await createJetStreamEventStore({
    nc: await natsConnect(nats.urls),
    ownsConnection: true,
    stream: 'BENCH_EVENTS',
    subjectPrefix: 'bench.events',
    replicas: 3,
  });
  const sqliteDir = tempDataDir('serp-scale-sqlite');
  const sqlite = createSqliteEventStore({ path: join(sqliteDir, 'events.db') });
  try {
    const sides = await alternate(rounds, { sqlite: () => appendRate(sqlite), jetstream: () => appendRate(js) });
    console.log(`\nevent-store appends (${APPENDS}, 64 in flight, distinct streams, every append durable):`);
    sides.sqlite.forEach((sq, i) => {
      console.log(
        `  round ${i + 1}: SQLite (embedded, group commit) ${fmt(sq.value)}/s; JetStream (3 nodes, R3, fsync always) ${fmt(sides.jetstream[i]!.value)}/s`,
      );
    });
    printRatio('  JetStream / SQLite appends per second', total(sides.jetstream), total(sides.sqlite), [
      'JetStream',
      'SQLite',
    ]);
  } finally {
    await js.close();
    await sqlite.close();
    await nats.stop();
    removeDir(sqliteDir);
  }
};

try {
  await crawl();
  await submits();
  await appends();
} finally {
  await google.close();
  removeDir(base);
}
// the origin's parked answers hold timers for ten minutes; nothing is left to wait for
process.exit(0);
