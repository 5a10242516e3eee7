import type { JobMessage } from '../../../contracts/jobMessage.js';
import type { SearchRequest } from '../../../contracts/search.js';
import type { ReadModelQueries } from '../../../projections/index.js';
import { createInProcessJobQueue } from '../../adapters/jobQueue/inProcess.js';
import { createMemoryRateLimiter } from '../../adapters/rateLimiter/memory.js';
import type { Config } from '../../config/config.js';
import type { Crawler } from '../../crawler/crawl.js';
import type { ResolvedTargeting } from '../../crawler/targeting.js';
import type { LocationJudge } from '../../geo/locationCheck.js';
import type { LocationResolver } from '../../geo/locations.js';
import type { BlobStore } from '../../ports/blobStore.js';
import type { CommandHandler } from '../../ports/commandHandler.js';
import type { EventStore } from '../../ports/eventStore.js';
import type { QueueStats } from '../../ports/jobQueue.js';
import type { ReadModelStore } from '../../ports/readModelStore.js';
import { createWriteSideRegistry, startBackgroundWorkers } from '../backgroundWorkers.js';
import { crawlerFromConfig } from '../crawler.js';
import { crawlWorkerFromConfig, jobQueueOptions } from '../crawlWorker.js';
import type { jsonLines } from '../logLines.js';

/**
 * The write side of an embedded service, wherever it runs: the job queue, the crawl worker, and the background workers
 * (backgroundWorkers.ts: the dispatcher, rank tracking's monitor worker, retention, …).
 */
export interface WriteSide {
  queueStats(): Promise<QueueStats>;
  /** the background workers' metrics, in Prometheus's text format (served with /metrics) */
  metricsText(): Promise<string>;
  /** what start-up decided differently from the configuration (a fetcher fallback) */
  warning?: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Composes the write side over the stores of the thread it runs on: on the event loop that answers HTTP (embedded.ts,
 * SERP_PIPELINE_THREAD=0) or on the pipeline thread (services/runtime/pipelineWorker.ts, the default). `locations` is the location index, or how the
 * request's targeting is resolved elsewhere; `beforeCrawl` runs before each crawl (the pipeline thread asks the HTTP
 * thread for the location of a job that does not carry its targeting from submit: jobs from before it did).
 */
export const composeWriteSide = async (parts: {
  config: Config;
  eventStore: EventStore;
  readModels: ReadModelStore;
  queries: ReadModelQueries;
  blobStore: BlobStore;
  handle: CommandHandler;
  projected(position: number): Promise<void>;
  /** the key pepper: webhook signing secrets derive from it (docs/webhooks.md) */
  pepper: string;
  locations: LocationResolver | ((request: SearchRequest) => ResolvedTargeting);
  beforeCrawl?: (message: JobMessage) => Promise<void>;
  /** with `locations` from another thread: how that thread judges where Google placed a page */
  judgeLocation?: LocationJudge;
  log: ReturnType<typeof jsonLines>;
}): Promise<WriteSide> => {
  const { config, eventStore, readModels, queries, blobStore, handle, log } = parts;
  const queue = createInProcessJobQueue(jobQueueOptions(config));
  const { crawler: inner, warning } = await crawlerFromConfig(config, parts.locations, parts.judgeLocation);
  const before = parts.beforeCrawl;
  const crawler: Crawler = before
    ? {
        async crawl(message, opts) {
          await before(message);
          return inner.crawl(message, opts);
        },
        close: () => inner.close(),
      }
    : inner;
  const worker = crawlWorkerFromConfig(config, { queue, handle, crawler, blobStore, role: 'embedded', log });
  // the monitor worker's own count of a key's submits: it paces a run under the key's rate by itself
  const limiter = createMemoryRateLimiter();
  const metrics = createWriteSideRegistry();
  let background: { stop(): Promise<void> } | undefined;
  return {
    queueStats: () => queue.stats(),
    metricsText: () => metrics.metrics(),
    warning,
    async start() {
      background = await startBackgroundWorkers({
        config,
        eventStore,
        readModels,
        queries,
        blobStore,
        queue,
        handle,
        rateLimiter: limiter,
        projected: parts.projected,
        log: log ?? (() => undefined),
        metrics,
        pepper: parts.pepper,
        // one serve per data directory: delivery claims a previous life of this process left are dead at once
        sole: true,
      });
      worker.start();
    },
    async stop() {
      await worker.stop();
      await background?.stop();
      await limiter.close();
      await queue.close();
      await crawler.close();
    },
  };
};
