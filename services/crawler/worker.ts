import { streams } from '../../contracts/events.js';
import { searchJobDecider } from '../../domain/searchJob/searchJob.js';
import type { CommandHandler } from '../app/commandHandler.js';
import type { BlobStore } from '../ports/blobStore.js';
import type { Consumer, Delivery, JobQueue } from '../ports/jobQueue.js';
import type { Crawler } from './crawl.js';
import { PARSER_VERSION } from './parser/index.js';

/**
 * Takes jobs from the queue, crawls them and reports with events. Acks only after the terminal event is on disk,
 * so a crash at any point means a redelivery, and the decider turns the redelivery of a finished job into nothing.
 */
export const createCrawlWorker = (deps: {
  queue: JobQueue;
  handle: CommandHandler;
  crawler: Crawler;
  blobStore: BlobStore;
  concurrency: number;
  workerId: string;
  /** how often a long crawl tells the queue it is still alive */
  heartbeatMs?: number;
  retryDelayMs?: number;
  log?: (msg: string, extra?: Record<string, unknown>) => void;
}) => {
  const { handle, crawler, blobStore } = deps;
  let consumer: Consumer | undefined;
  const now = () => new Date().toISOString();

  const fail = (jobId: string, attempt: number, reason: string, final: boolean) =>
    handle(streams.searchJob(jobId), searchJobDecider, {
      type: 'FailCrawl',
      jobId,
      attempt,
      reason,
      final,
      now: now(),
    });

  const work = async (d: Delivery) => {
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
    const beat = setInterval(() => void d.working().catch(() => undefined), deps.heartbeatMs ?? 10_000);
    beat.unref();
    try {
      const outcome = await crawler.crawl(d.message, { heartbeat: () => void d.working().catch(() => undefined) });
      if (outcome.status === 'failed' || !outcome.result || !outcome.rawHtml) {
        await fail(jobId, d.attempt, outcome.reason ?? 'no usable page', true);
        return d.ack();
      }
      const rawHtmlRef = await blobStore.put(`raw/${jobId}.html`, outcome.rawHtml);
      await handle(stream, searchJobDecider, {
        type: 'CompleteCrawl',
        jobId,
        status: outcome.status,
        pages: outcome.pages,
        result: outcome.result,
        rawHtmlRef,
        parserVersion: PARSER_VERSION,
        blocks: outcome.blocks,
        now: now(),
      });
      return d.ack();
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      deps.log?.('crawl attempt failed', { jobId, attempt: d.attempt, reason });
      await fail(jobId, d.attempt, reason, false).catch(() => undefined);
      return d.nak(deps.retryDelayMs ?? 1000);
    } finally {
      clearInterval(beat);
    }
  };

  return {
    start() {
      consumer = deps.queue.consume(work, {
        concurrency: deps.concurrency,
        onExhausted: async (m, attempts) => {
          await fail(m.jobId, attempts, `gave up after ${attempts} attempts`, true);
        },
      });
    },
    async stop() {
      await consumer?.stop();
    },
  };
};
