/**
 * Pipeline benchmark: N jobs of 10 pages each through the fake Google origin (real fixture pages, fixed latency per
 * page), at several concurrency settings, two ways in the same run:
 *  - `service`: the whole embedded service in this process: POST /v1/search over a real socket, SearchSubmitted on
 *    the SQLite event store, dispatcher, in-process queue, crawl worker, parse, raw HTML to the blob store,
 *    CrawlCompleted, projections. Done = the job left the jobStatus read model's open set.
 *  - `crawl only` (the baseline): the same crawler, parse and blob store with no events, queue or API.
 * Reports jobs/s, pages/s, p50/p99 submit-to-done, peak RSS (with the JS heap and the buffers outside it at that
 * moment), disk used, and the service/crawl-only throughput ratio (what the event-sourced plumbing costs). The fake
 * Google runs as a process of its own (`scripts/fake-google.ts`), as Google would: its pages and sockets are not the
 * crawler's memory or CPU. It asserts nothing (STYLE.md).
 *
 *   npx tsx test/bench/pipeline.ts [--jobs 300] [--latency 100] [--concurrency 8,32]
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createFsBlobStore } from '../../services/adapters/blobStore/fs.js';
import { loadConfig } from '../../services/compose/config.js';
import { startEmbedded } from '../../services/compose/embedded.js';
import { httpCrawlerFor, jobFor } from '../support/crawlerHarness.js';
import { startFakeGoogleProcess } from '../support/fakeGoogleProcess.js';
import { fixturesMissing } from '../support/fixtures.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '300' },
    latency: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '8,32' },
  },
});
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
  const { crawler } = httpCrawlerFor(google.origin, { limits: { pageTimeoutMs: 30_000 } });
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
      const outcome = await crawler.crawl(message, { heartbeat: () => undefined });
      if (outcome.status !== 'done' || !outcome.raw) notDone += 1;
      else {
        // read the total only after the await: `bytes += await …` would lose concurrent updates
        const ref = await blobs.putGzipped(`raw/${message.jobId}.html`, outcome.raw.gzip, outcome.raw);
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

const runService = async (concurrency: number) => {
  global.gc?.();
  const google = await startFakeGoogleProcess(latencyMs);
  const dir = await mkdtemp(join(tmpdir(), 'serp-bench-svc-'));
  const config = loadConfig(
    {
      SERP_GOOGLE_ORIGIN: google.origin,
      SERP_FETCHER: 'http',
      SERP_CRAWLER_CONCURRENCY: String(concurrency),
      SERP_LOG_LEVEL: 'warn',
    },
    { port: 0, dataDir: dir, host: '127.0.0.1' },
  );
  const svc = await startEmbedded(config, { logger: false });
  const { key } = await svc.core.keys.create({ tier: 'enterprise', rateLimitPerMin: 1_000_000 });
  global.gc?.();
  /** the started service before any search: the floor the peak stands on */
  const idleRss = process.memoryUsage().rss;
  const sampler = rssSampler();
  const t0 = performance.now();
  const submitted = new Map<string, number>();
  let refused = 0;
  // submit all at once, in batches of 50 sockets, as a client firing a batch of keywords would
  for (let i = 0; i < jobs; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, jobs - i) }, async (_, j) => {
        const res = await fetch(`${svc.url}/v1/search`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify({ keyword: `bench ${i + j}`, no_cache: true }),
        });
        const body = (await res.json()) as { job_id?: string };
        if (res.status === 202 && body.job_id) submitted.set(body.job_id, performance.now());
        else refused += 1;
      }),
    );
  }
  const doneAfter: number[] = [];
  /** RSS when each quarter of the jobs is done: flat means memory is bounded by concurrency, not by jobs */
  const rssByQuarter: number[] = [];
  const pending = new Set(submitted.keys());
  while (pending.size > 0) {
    await new Promise((r) => setTimeout(r, 100));
    const t = performance.now();
    for (const id of pending) {
      // done once projected terminal (a job the projector has not reached yet is not in the open set either)
      const doc = svc.core.queries.jobs.byId(id);
      if (!doc || doc.status === 'queued' || doc.status === 'running') continue;
      pending.delete(id);
      doneAfter.push(t - submitted.get(id)!);
      if (doneAfter.length % Math.ceil(submitted.size / 4) === 0)
        rssByQuarter.push(Math.round(process.memoryUsage().rss / 2 ** 20));
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  const peak = sampler.stop();
  let pages = 0;
  let notDone = 0;
  for (const id of submitted.keys()) {
    const doc = svc.core.queries.jobs.byId(id);
    if (doc?.status !== 'done') notDone += 1;
    pages += doc?.pagesFetched ?? 0;
  }
  await svc.close();
  const diskBytes = await duBytes(dir);
  await google.close();
  await rm(dir, { recursive: true, force: true });
  return {
    ...row({
      mode: 'service',
      concurrency,
      notDone: notDone + refused,
      pages,
      seconds,
      doneAfter,
      peakRss: peak.rss,
      diskBytes,
    }),
    idleRssMb: mb(idleRss),
    heapAtPeakMb: mb(peak.heapUsed),
    heapCommittedMb: mb(peak.heapTotal),
    buffersAtPeakMb: mb(peak.external),
    rssByQuarterMb: rssByQuarter.join('/'),
  };
};

const reason = fixturesMissing();
if (reason) {
  console.log(`# pipeline: skipped, ${reason}`);
  process.exit(0);
}
console.log(`# pipeline: ${jobs} jobs x 10 pages, ${latencyMs} ms per page, concurrency ${settings.join(' and ')}`);
console.log(
  `# latency bound: ${settings.map((c) => `${((c * 1000) / (10 * latencyMs)).toFixed(1)} jobs/s at ${c}`).join(', ')}`,
);
const rows = [];
for (const c of settings) {
  const service = await runService(c);
  const baseline = await run(c);
  rows.push(service, baseline);
  console.log(
    `# concurrency ${c}: service / crawl-only throughput = ${(Number(service.jobsPerS) / Number(baseline.jobsPerS)).toFixed(2)}`,
  );
}
console.table(rows);
