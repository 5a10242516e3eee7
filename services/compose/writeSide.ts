import { randomBytes } from 'node:crypto';
import type { SearchRequest } from '../../contracts/search.js';
import type { ReadModelQueries } from '../../projections/index.js';
import { createInProcessJobQueue } from '../adapters/jobQueue/inProcess.js';
import { createMemoryRateLimiter } from '../adapters/rateLimiter/memory.js';
import type { CommandHandler } from '../application/commandHandler.js';
import type { Crawler } from '../crawler/crawl.js';
import type { ResolvedTargeting } from '../crawler/targeting.js';
import { createCrawlWorker } from '../crawler/worker.js';
import { createDispatcher } from '../dispatcher/dispatcher.js';
import type { LocationResolver } from '../geo/locations.js';
import { createMonitorWorker } from '../monitors/worker.js';
import type { BlobStore } from '../ports/blobStore.js';
import type { EventStore } from '../ports/eventStore.js';
import type { QueueStats } from '../ports/jobQueue.js';
import type { ReadModelStore } from '../ports/readModelStore.js';
import { createWebhookWorker } from '../webhooks/worker.js';
import type { Config } from './config.js';
import { crawlerFromConfig } from './crawler.js';
import type { jsonLines } from './logLines.js';
import { scheduleRetention } from './retention.js';

/**
 * The write side of an embedded service, wherever it runs: the job queue, the crawl worker, dispatcher, retention and
 * the monitor worker (rank tracking's scheduler and recorder, docs/rank-tracking.md) and the webhook delivery worker
 * (docs/webhooks.md).
 */
export interface WriteSide {
  queueStats(): Promise<QueueStats>;
  /** what start-up decided differently from the configuration (a fetcher fallback) */
  warning?: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Composes the write side over the stores of the thread it runs on: on the event loop that answers HTTP (embedded.ts,
 * the default) or on the pipeline thread (pipelineThreadWorker.ts). `locations` is the location index, or how the
 * request's targeting is resolved elsewhere; `beforeCrawl` runs before each crawl (the pipeline thread asks the HTTP
 * thread for the location there).
 */
export const composeWriteSide = async (parts: {
  config: Config;
  eventStore: EventStore;
  readModels: ReadModelStore;
  queries: ReadModelQueries;
  blobStore: BlobStore;
  handle: CommandHandler;
  projected(position: number): Promise<void>;
  /** the key pepper: webhook signing secrets are derived from it */
  pepper: string;
  locations: LocationResolver | ((request: SearchRequest) => ResolvedTargeting);
  beforeCrawl?: (request: SearchRequest) => Promise<void>;
  log: ReturnType<typeof jsonLines>;
}): Promise<WriteSide> => {
  const { config, eventStore, readModels, queries, blobStore, handle, log } = parts;
  const queue = createInProcessJobQueue({
    ackWaitMs: 60_000,
    maxDeliver: 5,
    backoffMs: [1_000, 5_000, 15_000],
    dedupeWindowMs: 10 * 60_000,
  });
  const { crawler: inner, warning } = await crawlerFromConfig(config, parts.locations);
  const before = parts.beforeCrawl;
  const crawler: Crawler = before
    ? {
        async crawl(message, opts) {
          await before(message.request);
          return inner.crawl(message, opts);
        },
        close: () => inner.close(),
      }
    : inner;
  const worker = createCrawlWorker({
    queue,
    handle,
    crawler,
    blobStore,
    concurrency: config.crawlerConcurrency,
    workerId: `embedded-${process.pid}-${randomBytes(3).toString('hex')}`,
    log,
  });
  const dispatcher = createDispatcher({ eventStore, readModels, queue, handle });
  // the scheduler's own count of the key's submits: it paces a run under the key's rate by itself
  const limiter = createMemoryRateLimiter();
  const monitors = createMonitorWorker({
    eventStore,
    readModels,
    queries,
    handle,
    limiter,
    projected: parts.projected,
    config,
    log,
  });
  // one serve per data directory: claims a previous life of this process left are dead at once
  const webhooks = createWebhookWorker({
    eventStore,
    readModels,
    queries,
    handle,
    projected: parts.projected,
    pepper: parts.pepper,
    config,
    sole: true,
    log,
  });
  let retention: { stop(): Promise<void> } | undefined;
  return {
    queueStats: () => queue.stats(),
    warning,
    async start() {
      await dispatcher.start();
      worker.start();
      await monitors.start();
      await webhooks.start();
      retention = scheduleRetention(
        {
          eventStore,
          blobStore,
          handle,
          queries,
          compact: () => readModels.compact(),
          projected: parts.projected,
          retentionDays: config.retentionDays,
        },
        config.retentionSweepMin,
        log ?? (() => undefined),
      );
    },
    async stop() {
      await retention?.stop();
      await webhooks.stop();
      await monitors.stop();
      await limiter.close();
      await worker.stop();
      await dispatcher.stop();
      await queue.close();
      await crawler.close();
    },
  };
};
