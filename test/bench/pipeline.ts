/**
 * Crawl pipeline benchmark: N jobs of 10 pages each through the fake Google origin (real fixture pages, fixed latency
 * per page), crawled, parsed, merged and stored in the fs BlobStore, at several concurrency settings.
 * Reports jobs/s, pages/s, p50/p99 submit-to-done, peak RSS and disk used. It asserts nothing (STYLE.md).
 *
 *   npx tsx test/bench/pipeline.ts [--jobs 300] [--latency 100] [--concurrency 8,32]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createFsBlobStore } from '../../services/adapters/blobStore/fs.js';
import { httpCrawlerFor, jobFor } from '../support/crawlerHarness.js';
import { startFakeGoogle } from '../support/fakeGoogle.js';
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

const run = async (concurrency: number) => {
  const google = await startFakeGoogle({ latencyMs });
  const dir = await mkdtemp(join(tmpdir(), 'serp-bench-'));
  const blobs = createFsBlobStore(dir);
  const { crawler } = httpCrawlerFor(google.origin, { limits: { pageTimeoutMs: 30_000 } });
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 50);
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
      if (outcome.status !== 'done' || !outcome.rawHtml) notDone += 1;
      else {
        // read the total only after the await: `bytes += await …` would lose concurrent updates
        const ref = await blobs.put(`raw/${message.jobId}.html`, outcome.rawHtml);
        bytes += ref.bytes;
      }
      pages += outcome.pages.length;
      doneAfter.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  await crawler.close();
  await google.close();
  await rm(dir, { recursive: true, force: true });
  doneAfter.sort((a, b) => a - b);
  return {
    concurrency,
    jobs,
    notDone,
    pages,
    seconds: seconds.toFixed(1),
    jobsPerS: (jobs / seconds).toFixed(2),
    pagesPerS: (pages / seconds).toFixed(1),
    p50S: (percentile(doneAfter, 50) / 1000).toFixed(1),
    p99S: (percentile(doneAfter, 99) / 1000).toFixed(1),
    peakRssMb: Math.round(peakRss / 2 ** 20),
    diskMb: Math.round(bytes / 2 ** 20),
  };
};

const reason = fixturesMissing();
if (reason) process.exit(0);
console.log(`# pipeline: ${jobs} jobs x 10 pages, ${latencyMs} ms per page, concurrency ${settings.join(' and ')}`);
const rows = [];
for (const c of settings) rows.push(await run(c));
console.table(rows);
