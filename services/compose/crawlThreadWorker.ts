import { parentPort, workerData } from 'node:worker_threads';
import { prepareResult } from '../application/resultBlobs.js';
import { ownBuffer } from '../buffers.js';
import type { CrawlOutcome } from '../crawler/crawl.js';
import { runInBackground } from '../crawler/nice.js';
import type { BlobWriter } from '../ports/blobStore.js';
import { composeCrawler } from './crawler.js';
import {
  type CrawlThreadSetup,
  type FromThread,
  outcomeTransfers,
  resolvedTargetings,
  type ToThread,
  toThrownError,
} from './crawlThread.js';

/**
 * The crawl thread (crawlThread.ts): one crawler, composed as on the event loop, running the crawls the calling
 * thread sends and sending back what each yields. Locations come resolved with each job.
 *
 * It runs below the event loop that answers HTTP, as the parse threads do (nice.ts): when both cores are taken, a read
 * no longer waits for a crawl's bookkeeping. `readUnderCrawl.ts`, 48 jobs, with its first probe (four readers back
 * to back): read p99 under crawl 8.8–9.5 ms at the default priority, 7.2–7.7 ms at this one; the crawl took
 * 9.0–9.7 s against 8.7–10.1 s in those runs, 10.3 s against 8.0 s for the parse pool alone in a later one. Linux
 * only (nice.ts).
 */
runInBackground();
const port = parentPort!;
const post = (m: FromThread, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

/** each crawl's request → its location as resolved on the calling thread */
const resolved = resolvedTargetings();
const { resolveTargeting } = resolved;

const crawler = await composeCrawler({ ...(workerData as CrawlThreadSetup), resolveTargeting });
const running = new Map<number, AbortController>();

/** the job's blob writer stays on the calling thread: each gzip member moves there as the packer takes it */
const rawSinkFor = (id: number): BlobWriter => ({
  append(part) {
    const own = ownBuffer(part);
    post({ type: 'raw', id, part }, own ? [own] : []);
  },
  commit: () => Promise.reject(new Error('the raw HTML is committed by the calling thread')),
  abort: () => Promise.resolve(),
});

/**
 * The result validated, serialised, gzipped and digested here (resultBlobs.ts prepareResult), not on the event loop
 * that answers HTTP: there it was a quarter of the loop's stretches of 3 ms or more while crawls ran, and zod's copy
 * of the result was garbage for its collections (readUnderCrawl.ts, profiled).
 */
const withPreparedResult = async (outcome: CrawlOutcome): Promise<CrawlOutcome> => {
  if (!outcome.result) return outcome;
  const { result, prepared } = await prepareResult(outcome.result);
  return { ...outcome, result, prepared };
};

port.on('message', (m: ToThread) => {
  if (m.type === 'abort') {
    running.get(m.id)?.abort();
    return;
  }
  if (m.type === 'close') {
    for (const c of running.values()) c.abort();
    void crawler.close().finally(() => port.close());
    return;
  }
  const { id, message } = m;
  if (m.targeting) resolved.set(message.request, m.targeting);
  const controller = new AbortController();
  running.set(id, controller);
  crawler
    .crawl(message, {
      heartbeat: () => post({ type: 'beat', id }),
      signal: controller.signal,
      ...(m.sink ? { rawSink: rawSinkFor(id) } : {}),
    })
    .then(withPreparedResult)
    .then(
      (outcome) => post({ type: 'done', id, outcome }, outcomeTransfers(outcome)),
      (err) => post({ type: 'thrown', id, error: toThrownError(err) }),
    )
    .finally(() => running.delete(id));
});
