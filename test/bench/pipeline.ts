/**
 * Pipeline benchmark: N jobs of 10 pages each through the fake Google origin (real fixture pages, fixed latency per
 * page), at several concurrency settings, two ways in the same run:
 *  - `service`: the embedded service as `npm start` runs it (the build, `node bin/serp-api.js serve`) in a process of
 *    its own: POST /v1/search over a real socket, SearchSubmitted on the SQLite event store, dispatcher, in-process
 *    queue, crawl worker, parse threads, raw HTML to the blob store, CrawlCompleted, projections. Done = the admin
 *    API lists the job as finished. Its RSS is read from /proc: the service's alone (every thread of it).
 *  - `crawl only` (the baseline): the same crawler with the same parse threads (the service's default count, which
 *    both sides are given explicitly) and the same requests at once, and the same blob store, with no events, queue
 *    or API, in this process (so its RSS is this script's, under tsx).
 * Reports jobs/s, pages/s, p50/p99 submit-to-done, peak RSS (with the service's JS heap and the buffers outside it at
 * that moment, from its metrics, and the kernel's own high-water mark), disk used, and the service/crawl-only
 * throughput ratio (what the event-sourced plumbing costs; none when a job of either side did not end done). Which
 * side runs first alternates from one concurrency setting to the next (compare.ts). The fake Google runs as a process of its own
 * (`scripts/fake-google.ts`), as Google would: its pages and sockets are not the crawler's memory or CPU. Builds the
 * service first (`tsc -p tsconfig.build.json` in `--root`, skipped with `--no-build`); `--root` runs another
 * checkout's build, for a before/after. Linux only (/proc). It asserts nothing (docs/style.md#tests).
 *
 *   npx tsx test/bench/pipeline.ts [--jobs 300] [--latency 100] [--concurrency 8,32] [--root DIR] [--no-build]
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createFsBlobStore } from '../../services/adapters/blobStore/fs.js';
import { loadConfig } from '../../services/config/config.js';
import { loadTestSettings } from '../../services/config/tests.js';
import { createHashThread } from '../../services/threads/hashThread.js';
import { boundHeapGrowth } from '../../services/threads/heap.js';
import { createParsePool } from '../../services/threads/parsePool.js';
import { startBuiltService } from '../support/builtService.js';
import { httpCrawlerFor, jobFor } from '../support/crawlerHarness.js';
import { startFakeGoogleProcess } from '../support/fakeGoogleProcess.js';
import { fixturesMissing } from '../support/fixtures.js';
import { alternate, machineNote, printRatio } from './compare.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '300' },
    latency: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '8,32' },
    root: { type: 'string', default: '.' },
    'no-build': { type: 'boolean', default: false },
  },
});
const root = values.root;
const jobs = Number(values.jobs);
const latencyMs = Number(values.latency);
const settings = values.concurrency.split(',').map(Number);

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;

/** One table row: the figures both modes report, from their raw measurements. */
const row = (m: {
  mode: string;
  concurrency: number;
  notDone: number;
  pages: number;
  seconds: number;
  doneAfter: number[];
  peakRss: number;
  diskBytes: number;
}) => {
  const sorted = [...m.doneAfter].sort((a, b) => a - b);
  return {
    mode: m.mode,
    concurrency: m.concurrency,
    jobs,
    notDone: m.notDone,
    pages: m.pages,
    seconds: m.seconds.toFixed(1),
    jobsPerS: (jobs / m.seconds).toFixed(2),
    pagesPerS: (m.pages / m.seconds).toFixed(1),
    p50S: (percentile(sorted, 50) / 1000).toFixed(1),
    p99S: (percentile(sorted, 99) / 1000).toFixed(1),
    peakRssMb: Math.round(m.peakRss / 2 ** 20),
    diskMb: Math.round(m.diskBytes / 2 ** 20),
  };
};

/** samples RSS every 50 ms; keeps the peak and what the main thread's heap and off-heap buffers held at it */
const rssSampler = () => {
  let peak = process.memoryUsage();
  const timer = setInterval(() => {
    const now = process.memoryUsage();
    if (now.rss > peak.rss) peak = now;
  }, 50);
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
};

const mb = (bytes: number) => Math.round(bytes / 2 ** 20);

const run = async (concurrency: number) => {
  global.gc?.();
  const google = await startFakeGoogleProcess(latencyMs);
  const dir = await mkdtemp(join(tmpdir(), 'serp-bench-'));
  const blobs = createFsBlobStore(dir);
  // what the service's crawler has: its parse threads and `concurrency` requests at once to the one route
  const { crawler } = httpCrawlerFor(google.origin, {
    limits: { pageTimeoutMs: 30_000 },
    env: { SERP_ROUTE_MAX_IN_FLIGHT: String(concurrency) },
    // as the service composes it (services/compose/crawler.ts): the parse pool, and the raw HTML's hash on a thread
    deps: { parser: createParsePool(serviceDefaults), hashing: createHashThread() },
  });
  const sampler = rssSampler();
  const messages = Array.from({ length: jobs }, (_, i) => jobFor({ keyword: `bench ${i}` }));
  const doneAfter: number[] = [];
  let pages = 0;
  let bytes = 0;
  let notDone = 0;
  const t0 = performance.now();
  let next = 0;
  // every job is "submitted" at t0; workers take them in order, as the queue's consumers would
  const worker = async () => {
    for (let i = next++; i < messages.length; i = next++) {
      const message = messages[i]!;
      // the raw HTML goes to the blob store page by page, as the service's crawl worker sends it
      const rawSink = blobs.openGzipped(`raw/${message.jobId}.html`);
      const outcome = await crawler.crawl(message, { heartbeat: () => undefined, rawSink });
      if (outcome.status !== 'done' || !outcome.raw) {
        notDone += 1;
        await rawSink.abort();
      } else {
        // read the total only after the await: `bytes += await …` would lose concurrent updates
        const ref = await rawSink.commit(outcome.raw);
        bytes += ref.bytes;
      }
      pages += outcome.pages.length;
      doneAfter.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - t0) / 1000;
  const peak = sampler.stop();
  await crawler.close();
  await google.close();
  const diskBytes = await duBytes(dir);
  await rm(dir, { recursive: true, force: true });
  return {
    ...row({ mode: 'crawl only', concurrency, notDone, pages, seconds, doneAfter, peakRss: peak.rss, diskBytes }),
    heapAtPeakMb: mb(peak.heapUsed),
    heapCommittedMb: mb(peak.heapTotal),
    buffersAtPeakMb: mb(peak.external),
    htmlMb: mb(bytes),
  };
};

const duBytes = async (dir: string): Promise<number> => {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    total += entry.isDirectory() ? await duBytes(p) : (await stat(p)).size;
  }
  return total;
};

/** VmRSS or VmHWM (the kernel's peak) of a process, in bytes; every thread of it (the parse threads too) */
const procKb = (pid: number, field: 'VmRSS' | 'VmHWM') => {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
};

/** one sample of the service's own heap and buffers, from its Prometheus metrics (prom-client's process metrics) */
const memoryOf = async (url: string, token: string) => {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
  const value = (name: string) => Number(new RegExp(`^serp_${name} (\\S+)`, 'm').exec(text)?.[1] ?? 0);
  return {
    heapUsed: value('nodejs_heap_size_used_bytes'),
    heapTotal: value('nodejs_heap_size_total_bytes'),
    external: value('nodejs_external_memory_bytes'),
  };
};

/**
 * The service as `npm start` runs it (the build in `root`, `node bin/serp-api.js serve`) in a process of its own, so
 * that its RSS is the service's alone: not this script's, not tsx's, not the baseline's. Jobs are followed through the
 * admin API's list of a key's jobs (one query per 200 jobs a poll), submit-to-done from the service's own timestamps.
 */
const runService = async (concurrency: number) => {
  const google = await startFakeGoogleProcess(latencyMs);
  const dir = await mkdtemp(join(tmpdir(), 'serp-bench-svc-'));
  const token = randomBytes(24).toString('hex');
  // SERP_TEST_NODE_ARGS: node flags for the service only, as for the tests' services (test/support/service.ts)
  const nodeArgs = (loadTestSettings().testNodeArgs ?? '').split(' ').filter(Boolean);
  let svc: Awaited<ReturnType<typeof startBuiltService>> | undefined;
  try {
    svc = await startBuiltService(
      root,
      dir,
      {
        SERP_GOOGLE_ORIGIN: google.origin,
        SERP_CRAWLER_CONCURRENCY: String(concurrency),
        SERP_ADMIN_TOKEN: token,
        SERP_PARSE_THREADS: String(parseThreads),
      },
      nodeArgs,
    );
    const { url, child } = svc;
    const pid = child.pid!;
    const admin = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    // a key's job list answers its newest 200: one key per 200 jobs
    const keys: { key: string; key_id: string }[] = [];
    for (let i = 0; i < Math.ceil(jobs / 200); i++) {
      const res = await fetch(`${url}/admin/api/keys`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ tier: 'enterprise', rate_limit_per_min: 1_000_000 }),
      });
      keys.push((await res.json()) as { key: string; key_id: string });
    }
    await new Promise((r) => setTimeout(r, 2_000));
    /** the started service before any search: the floor the peak stands on */
    const idleRss = procKb(pid, 'VmRSS');
    let peakRss = idleRss;
    let atPeak = await memoryOf(url, token);
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const rss = procKb(pid, 'VmRSS');
        if (rss > peakRss) {
          peakRss = rss;
          atPeak = await memoryOf(url, token);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const t0 = performance.now();
    let refused = 0;
    let submitted = 0;
    // submit all at once, in batches of 50 sockets, as a client firing a batch of keywords would
    for (let i = 0; i < jobs; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, jobs - i) }, async (_, j) => {
          const res = await fetch(`${url}/v1/search`, {
            method: 'POST',
            headers: { 'x-api-key': keys[Math.floor((i + j) / 200)]!.key, 'content-type': 'application/json' },
            body: JSON.stringify({ keyword: `bench ${i + j}`, no_cache: true }),
          });
          await res.arrayBuffer();
          if (res.status === 202) submitted += 1;
          else refused += 1;
        }),
      );
    }
    type Listed = { status: string; pages?: number; submitted_at: string; completed_at?: string };
    /** RSS when each quarter of the jobs is done: flat means memory is bounded by concurrency, not by jobs */
    const rssByQuarter: number[] = [];
    let listed: Listed[] = [];
    for (;;) {
      await new Promise((r) => setTimeout(r, 250));
      listed = [];
      for (const k of keys) {
        const res = await fetch(`${url}/admin/api/keys/${k.key_id}/jobs?limit=200`, { headers: admin });
        listed.push(...((await res.json()) as { jobs: Listed[] }).jobs);
      }
      const done = listed.filter((j) => j.status !== 'queued' && j.status !== 'running').length;
      while (rssByQuarter.length < Math.floor((4 * done) / Math.max(1, submitted)))
        rssByQuarter.push(mb(procKb(pid, 'VmRSS')));
      if (done >= submitted) break;
    }
    const seconds = (performance.now() - t0) / 1000;
    sampling = false;
    await sampler;
    const hwm = procKb(pid, 'VmHWM');
    const doneAfter = listed.map((j) => Date.parse(j.completed_at ?? j.submitted_at) - Date.parse(j.submitted_at));
    const notDone = listed.filter((j) => j.status !== 'done').length;
    const pages = listed.reduce((n, j) => n + (j.pages ?? 0), 0);
    child.kill('SIGTERM');
    if (child.exitCode === null) await once(child, 'exit');
    const diskBytes = await duBytes(dir);
    return {
      ...row({
        mode: 'service',
        concurrency,
        notDone: notDone + refused,
        pages,
        seconds,
        doneAfter,
        peakRss,
        diskBytes,
      }),
      idleRssMb: mb(idleRss),
      hwmMb: mb(hwm),
      heapAtPeakMb: mb(atPeak.heapUsed),
      heapCommittedMb: mb(atPeak.heapTotal),
      buffersAtPeakMb: mb(atPeak.external),
      rssByQuarterMb: rssByQuarter.join('/'),
    };
  } finally {
    await svc?.kill();
    await google.close();
    await rm(dir, { recursive: true, force: true });
  }
};

// the crawl-only baseline runs in this process: it bounds its heap's growth as `serve` does, so it pays the same
// collections the service pays
const serviceDefaults = loadConfig(process.env);
boundHeapGrowth(serviceDefaults.heapGrowingPercent);
/** the service's parse threads by default (one per core but the pipeline thread's), given to both sides */
const parseThreads = serviceDefaults.parseThreads;

const reason = fixturesMissing();
if (reason) {
  console.log(`# pipeline: skipped, ${reason}`);
  process.exit(0);
}
if (!values['no-build'])
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: resolve(root), stdio: 'inherit' });
console.log(
  `# pipeline: ${jobs} jobs x 10 pages, ${latencyMs} ms per page, concurrency ${settings.join(' and ')}, ${parseThreads} parse threads on both sides; ${machineNote()}`,
);
console.log(
  `# latency bound: ${settings.map((c) => `${((c * 1000) / (10 * latencyMs)).toFixed(1)} jobs/s at ${c}`).join(', ')}`,
);
const rows = [];
for (const [i, c] of settings.entries()) {
  const sides = await alternate(1, { service: () => runService(c), baseline: () => run(c) }, undefined, i);
  const [service, baseline] = [sides.service[0]!, sides.baseline[0]!];
  rows.push(service, baseline);
  const figure = (r: { jobsPerS: string; notDone: number }) => ({ value: Number(r.jobsPerS), failures: r.notDone });
  printRatio(
    `# concurrency ${c} (${i % 2 === 0 ? 'service' : 'crawl only'} first): service / crawl-only throughput`,
    figure(service),
    figure(baseline),
    ['the service', 'crawl only'],
  );
}
console.table(rows);
