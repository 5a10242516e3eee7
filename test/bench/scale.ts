/**
 * Distributed mode at scale (docs/benchmarks.md#distributed-mode), on a real three-node nats-server cluster on
 * loopback:
 *
 * 1. Pages per second with 1, 2 and 4 crawler processes against the fake origin with latency (each crawler at
 *    concurrency 2, so the process count is what grows). Baseline: the 1-process figure of the same run.
 * 2. The API's submits per second in distributed mode (two api processes behind the same cluster) vs embedded
 *    (`serp-api serve`), the same fsync'd submit path, the same client load (64 in flight).
 * 3. Event-store appends per second: JetStream (R3, sync_interval: always) vs the embedded SQLite store
 *    (synchronous=FULL, group commit), 64 appends in flight to distinct streams.
 *
 * Run: npx tsx test/bench/scale.ts [jobsPerRound]
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createJetStreamEventStore } from '../../services/adapters/eventStore/jetstream.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { startLocalCluster } from '../../services/cli/dev/cluster.js';
import type { EventStore } from '../../services/ports/eventStore.js';
import { startFakeGoogle } from '../support/fakeGoogle.js';
import { natsConnect } from '../support/nats.js';
import { cli, pollJob, removeDir, startService, submit, tempDataDir, UNPACED } from '../support/service.js';

const jobsPerRound = Number(process.argv[2] ?? 16);
const LATENCY_MS = 200;
const google = await startFakeGoogle({ latencyMs: LATENCY_MS });
const dir = tempDataDir('serp-scale');
const cluster = await startLocalCluster({
  dir,
  apis: 2,
  crawlers: 1,
  env: {
    SERP_GOOGLE_ORIGIN: google.origin,
    SERP_FETCHER: 'http',
    ...UNPACED,
    SERP_CRAWLER_CONCURRENCY: '2',
    SERP_LOG_LEVEL: 'warn',
  },
  command: [process.execPath, '--import', 'tsx', join(process.cwd(), 'services', 'cli', 'main.ts')],
});
const fmt = (n: number) => n.toFixed(1);

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

try {
  const [A, B] = cluster.apiUrls;
  const mint = async (url: string, token: string) => {
    const res = await fetch(`${url}/admin/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'enterprise', label: 'scale', rate_limit_per_min: 100_000_000 }),
    });
    return ((await res.json()) as { key: string }).key;
  };
  const key = await mint(A, cluster.adminToken);
  await new Promise((r) => setTimeout(r, 500));

  // 1. pages per second by crawler processes
  const crawlRound = async (crawlers: number) => {
    const t0 = Date.now();
    const jobs = await inParallel(jobsPerRound, 16, async (i) => {
      const res = await submit(i % 2 ? A : B, key, {
        keyword: `scale ${crawlers} ${i} ${randomBytes(3).toString('hex')}`,
      });
      return ((await res.json()) as { job_id: string }).job_id;
    });
    let pages = 0;
    for (const job of jobs) {
      const res = await pollJob(A, key, job, 'json', 600_000);
      const body = (await res.json()) as { search_metadata: { pages_fetched?: number } };
      pages += body.search_metadata.pages_fetched ?? 10;
    }
    const s = (Date.now() - t0) / 1000;
    return { crawlers, pages, seconds: s, pagesPerSecond: pages / s };
  };
  const rounds = [];
  rounds.push(await crawlRound(1));
  await cluster.add('crawler');
  rounds.push(await crawlRound(2));
  await Promise.all([cluster.add('crawler'), cluster.add('crawler')]);
  rounds.push(await crawlRound(4));
  console.log(
    `\ncrawl: ${jobsPerRound} jobs of 10 pages per round, ${LATENCY_MS} ms per page, concurrency 2 per crawler`,
  );
  for (const r of rounds) {
    console.log(
      `  ${r.crawlers} crawler process(es): ${r.pages} pages in ${fmt(r.seconds)} s = ${fmt(r.pagesPerSecond)} pages/s (×${(r.pagesPerSecond / rounds[0].pagesPerSecond).toFixed(2)} vs 1)`,
    );
  }

  // 2. submits per second: distributed (both apis) vs embedded
  const SUBMITS = 1000;
  const submitRate = async (urls: string[], k: string) => {
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
    const ok = statuses.filter((s) => s === 202 || s === 200).length;
    return { perSecond: ok / ((Date.now() - t0) / 1000), ok };
  };
  // crawling the submitted jobs is not what is measured, in either mode: the origin holds every page for minutes
  // from here on, so crawls wait on sockets and take no CPU from the submit path
  google.setMode({ latencyMs: 600_000 });
  const dist = await submitRate([A, B], key);
  const embeddedData = tempDataDir('serp-scale-embedded');
  const embedded = await startService(embeddedData, {
    SERP_GOOGLE_ORIGIN: google.origin,
    SERP_CRAWLER_CONCURRENCY: '2',
  });
  let emb: { perSecond: number; ok: number };
  try {
    const ekey = JSON.parse(
      await cli(['keys', 'create', '--tier', 'enterprise', '--rate', '100000000', '--json', '--data', embeddedData]),
    ).key;
    emb = await submitRate([embedded.url], ekey);
  } finally {
    await embedded.kill();
    removeDir(embeddedData);
  }
  console.log(`\nsubmits (${SUBMITS}, 64 in flight, fresh keywords):`);
  console.log(`  embedded (one process, SQLite):        ${fmt(emb.perSecond)}/s (${emb.ok} accepted)`);
  console.log(
    `  distributed (2 api, JetStream R3):      ${fmt(dist.perSecond)}/s (${dist.ok} accepted) = ×${(dist.perSecond / emb.perSecond).toFixed(2)} of embedded`,
  );

  // 3. event-store appends per second
  const APPENDS = 3000;
  const appendRate = async (store: EventStore) => {
    const t0 = Date.now();
    await inParallel(APPENDS, 64, (i) =>
      store.appendToStream(`bench-${i}-${randomBytes(3).toString('hex')}`, [{ type: 'Bench', data: { i } }], {
        expectedVersion: 'no_stream',
      }),
    );
    return APPENDS / ((Date.now() - t0) / 1000);
  };
  const js = await createJetStreamEventStore({
    nc: await natsConnect(cluster.nats.urls),
    ownsConnection: true,
    stream: 'BENCH_EVENTS',
    subjectPrefix: 'bench.events',
    replicas: 3,
  });
  const sqliteDir = tempDataDir('serp-scale-sqlite');
  const sqlite = createSqliteEventStore({ path: join(sqliteDir, 'events.db') });
  try {
    const sq = await appendRate(sqlite);
    const jr = await appendRate(js);
    console.log(`\nevent-store appends (${APPENDS}, 64 in flight, distinct streams, every append durable):`);
    console.log(`  SQLite (embedded, group commit):       ${fmt(sq)}/s`);
    console.log(`  JetStream (3 nodes, R3, fsync always):  ${fmt(jr)}/s = ×${(jr / sq).toFixed(2)} of SQLite`);
  } finally {
    await js.close();
    await sqlite.close();
    removeDir(sqliteDir);
  }
} finally {
  await Promise.all(cluster.processes.map((p) => cluster.kill(p)));
  await cluster.stop();
  await google.close();
  removeDir(dir);
}
