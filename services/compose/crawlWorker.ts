import { randomBytes } from 'node:crypto';
import type { Config } from '../config/config.js';
import { QUEUE_BACKOFF_MS } from '../config/schema.js';
import type { Crawler } from '../crawler/crawl.js';
import type { BlobStore } from '../ports/blobStore.js';
import type { CommandHandler } from '../ports/commandHandler.js';
import type { JobQueue } from '../ports/jobQueue.js';
import { createCrawlWorker } from '../searches/workers/worker.js';
import { crawlerSlots } from './crawler.js';

/** The job queue's settings (SERP_QUEUE_*), the same in every mode and for either adapter. */
export type JobQueueConfig = Pick<Config, 'queueAckWaitMs' | 'queueMaxDeliver' | 'queueDedupeWindowMs'>;

/** the options both queue adapters take, from the configuration (in-process embedded, JetStream distributed) */
export const jobQueueOptions = (config: JobQueueConfig) => ({
  ackWaitMs: config.queueAckWaitMs,
  maxDeliver: config.queueMaxDeliver,
  backoffMs: QUEUE_BACKOFF_MS,
  dedupeWindowMs: config.queueDedupeWindowMs,
});

/**
 * The crawl worker of a process that crawls (embedded mode's write side, distributed mode's `crawler` role), wired
 * one way: its slots per queue class (`crawlerSlots`), its drain, and a heartbeat four times within the queue's ack
 * wait, so a long crawl is never presumed dead (docs/architecture.md#the-search-path-step-by-step, step 6).
 */
export const crawlWorkerFromConfig = (
  config: JobQueueConfig & Pick<Config, 'crawlerConcurrency' | 'fairShare' | 'drainTimeoutMs'>,
  parts: {
    queue: JobQueue;
    handle: CommandHandler;
    crawler: Crawler;
    blobStore: BlobStore;
    /** names the worker in its claims and logs: `embedded`, `crawler` */
    role: string;
    log?: (msg: string, extra?: Record<string, unknown>) => void;
  },
) =>
  createCrawlWorker({
    queue: parts.queue,
    handle: parts.handle,
    crawler: parts.crawler,
    blobStore: parts.blobStore,
    concurrency: crawlerSlots(config),
    drainTimeoutMs: config.drainTimeoutMs,
    workerId: `${parts.role}-${process.pid}-${randomBytes(3).toString('hex')}`,
    heartbeatMs: Math.max(500, Math.floor(config.queueAckWaitMs / 4)),
    ...(parts.log ? { log: parts.log } : {}),
  });
