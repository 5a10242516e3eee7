import { type CrawlCost, type CrawlFailure, streams } from '../../../contracts/events.js';
import { searchJobDecider } from '../../../domain/searchJob/searchJob.js';
import { PARSER_VERSION } from '../../../parser/index.js';
import { putResult, resultBlobKey } from '../../answers/resultBlobs.js';
import { releaseBuffers } from '../../buffers.js';
import type { Crawler } from '../../crawler/crawl.js';
import { CrawlAbortedError, failureOf } from '../../crawler/errors.js';
import type { BlobStore } from '../../ports/blobStore.js';
import type { CommandHandler } from '../../ports/commandHandler.js';
import type { ConsumeOptions, Consumer, Delivery, JobQueue } from '../../ports/jobQueue.js';

/** A crawl still running when the drain timeout passed: handed back to the queue and no longer awaited. */
const abandoned = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => {
    const fire = () => reject(new CrawlAbortedError());
    if (signal.aborted) fire();
    else signal.addEventListener('abort', fire, { once: true });
  });

/**
 * Takes jobs from the queue, crawls them and reports with events. Acks only after the terminal event is on disk,
 * so a crash at any point means a redelivery, and the decider turns the redelivery of a finished job into nothing.
 *
 * While a crawl runs the worker calls `working()` every `heartbeatMs`, so a crawl longer than the queue's ack wait is
 * not presumed dead and handed to another consumer. Set `heartbeatMs` well under the queue's ack wait.
 *
 * `stop()` drains: no new job starts, the crawls in flight get up to `drainTimeoutMs` to finish and be acked. The
 * ones still running then are aborted and handed back with `nak()`, never acked and never recorded as failed (a
 * shutdown is not the job's fault): the next consumer, or the dispatcher's re-enqueue of open jobs after a restart,
 * crawls them again. An abandoned crawl that ignores its signal and finishes later records nothing, so the job still
 * completes once and its single quota reservation stands.
 */
export const createCrawlWorker = (deps: {
  queue: JobQueue;
  handle: CommandHandler;
  crawler: Crawler;
  blobStore: BlobStore;
  /** crawls at once, per queue class (a lane, or a lane's express class) or one number for every class */
  concurrency: ConsumeOptions['concurrency'];
  workerId: string;
  /** how often a long crawl tells the queue it is still alive (default 10 s) */
  heartbeatMs?: number;
  /** how long `stop()` waits for the crawls in flight before handing them back to the queue (SERP_DRAIN_TIMEOUT_MS) */
  drainTimeoutMs: number;
  retryDelayMs?: number;
  log?: (msg: string, extra?: Record<string, unknown>) => void;
}) => {
  const { handle, crawler, blobStore } = deps;
  let consumer: Consumer | undefined;
  let stopping = false;
  let draining: Promise<{ abandoned: number }> | undefined;
  /** one controller per crawl in flight: aborted when the drain timeout passes */
  const inFlight = new Set<AbortController>();
  const now = () => new Date().toISOString();

  const fail = (
    jobId: string,
    attempt: number,
    reason: string,
    failure: CrawlFailure,
    final: boolean,
    cost?: CrawlCost,
    firstRequestAt?: string,
  ) =>
    handle(streams.searchJob(jobId), searchJobDecider, {
      type: 'FailCrawl',
      jobId,
      attempt,
      reason,
      failure,
      ...(cost ? { cost } : {}),
      ...(firstRequestAt ? { firstRequestAt } : {}),
      final,
      now: now(),
    });

  const crawlOnce = async (d: Delivery, signal: AbortSignal) => {
    const { jobId } = d.message;
    const stream = streams.searchJob(jobId);
    const started = await handle(stream, searchJobDecider, {
      type: 'StartCrawl',
      jobId,
      attempt: d.attempt,
      worker: deps.workerId,
      now: now(),
    });
    if (started.events.length === 0) return d.ack();
    const alive = () => void d.working().catch(() => undefined);
    const beat = setInterval(alive, deps.heartbeatMs ?? 10_000);
    beat.unref();
    // the raw HTML goes to the blob store page by page; readable under its key only once committed below
    const rawKey = `raw/${jobId}.html`;
    const rawSink = blobStore.openGzipped(rawKey);
    let rawCommitted = false;
    try {
      const crawl = crawler.crawl(d.message, { heartbeat: alive, signal, rawSink });
      // An abandoned crawl may still settle later: nobody awaits it then, so its rejection must not go unhandled.
      crawl.catch(() => undefined);
      const outcome = await Promise.race([crawl, abandoned(signal)]);
      if (outcome.status === 'failed' || !outcome.result || !outcome.raw) {
        deps.log?.('crawl failed', {
          jobId,
          attempt: d.attempt,
          outcome: 'failed',
          kind: outcome.failure?.kind ?? outcome.failure?.code ?? 'unknown',
        });
        await fail(
          jobId,
          d.attempt,
          outcome.reason ?? 'no usable page',
          outcome.failure ?? { code: 'SERP_CRAWL_UNEXPECTED' },
          true,
          outcome.cost,
          outcome.firstRequestAt,
        );
        return d.ack();
      }
      const gzip = outcome.raw.gzip;
      rawCommitted = true;
      const [rawHtmlRef, resultRef] = await Promise.all([
        // a crawler that kept the pages itself hands them over whole
        gzip
          ? rawSink.abort().then(() => blobStore.putGzipped(rawKey, gzip, outcome.raw!))
          : rawSink.commit(outcome.raw),
        putResult(blobStore, resultBlobKey(jobId), outcome.result),
      ]);
      // stored: this process never reads these bytes again (the blob store's copy is the one /raw reads)
      if (gzip) releaseBuffers(gzip);
      await handle(stream, searchJobDecider, {
        type: 'CompleteCrawl',
        jobId,
        status: outcome.status,
        pages: outcome.pages,
        resultRef,
        rawHtmlRef,
        parserVersion: PARSER_VERSION,
        blocks: outcome.blocks,
        ...(outcome.targeting ? { targeting: outcome.targeting } : {}),
        exhausted: outcome.exhausted ?? false,
        ...(outcome.cost ? { cost: outcome.cost } : {}),
        ...(outcome.firstRequestAt ? { firstRequestAt: outcome.firstRequestAt } : {}),
        ...(outcome.locationCheck ? { locationCheck: outcome.locationCheck } : {}),
        now: now(),
      });
      deps.log?.('crawl finished', {
        jobId,
        attempt: d.attempt,
        outcome: outcome.status,
        pages: outcome.pages.length,
        ...(outcome.locationCheck ? { location: outcome.locationCheck.status } : {}),
        ...(outcome.status === 'partial' && outcome.reason ? { reason: outcome.reason } : {}),
      });
      return d.ack();
    } catch (err) {
      if (signal.aborted) {
        deps.log?.('crawl abandoned at shutdown, handed back to the queue', { jobId, attempt: d.attempt });
        return d.nak(0);
      }
      const reason = err instanceof Error ? err.message : String(err);
      const failure = failureOf(err);
      deps.log?.('crawl attempt failed', { jobId, attempt: d.attempt, kind: failure.kind ?? failure.code, reason });
      await fail(jobId, d.attempt, reason, failure, false).catch(() => undefined);
      return d.nak(deps.retryDelayMs ?? 1000);
    } finally {
      clearInterval(beat);
      // failed, abandoned or thrown: what the crawl wrote is dropped (an abandoned crawl's later parts with it)
      if (!rawCommitted) void rawSink.abort().catch(() => undefined);
    }
  };

  const work = async (d: Delivery) => {
    // A queue that prefetches may still hand over a message after stop(): give it back untouched.
    if (stopping) return d.nak(0);
    const controller = new AbortController();
    inFlight.add(controller);
    try {
      await crawlOnce(d, controller.signal);
    } finally {
      inFlight.delete(controller);
    }
  };

  return {
    start() {
      if (consumer) throw new Error('crawl worker already started');
      stopping = false;
      consumer = deps.queue.consume(work, {
        concurrency: deps.concurrency,
        onExhausted: async (m, attempts) => {
          await fail(
            m.jobId,
            attempts,
            `gave up after ${attempts} attempts`,
            { code: 'SERP_CRAWL_EXHAUSTED', attempts },
            true,
          );
        },
      });
    },
    /** resolves once every crawl in flight is acked, or handed back after the drain timeout; `abandoned` counts those */
    stop(options: { timeoutMs?: number } = {}): Promise<{ abandoned: number }> {
      const current = consumer;
      if (!current) return Promise.resolve({ abandoned: 0 });
      draining ??= (async () => {
        stopping = true;
        const drained = current.stop();
        let timer: NodeJS.Timeout | undefined;
        const timedOut = await Promise.race([
          drained.then(() => false),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(true), options.timeoutMs ?? deps.drainTimeoutMs);
          }),
        ]);
        clearTimeout(timer);
        const handedBack = timedOut ? inFlight.size : 0;
        if (timedOut) {
          deps.log?.('drain timeout: handing the crawls in flight back to the queue', { crawls: handedBack });
          for (const controller of inFlight) controller.abort();
          await drained;
        }
        consumer = undefined;
        draining = undefined;
        return { abandoned: handedBack };
      })();
      return draining;
    },
  };
};
