import { Registry } from 'prom-client';
import type { ReadModelQueries } from '../../projections/index.js';
import type { Config } from '../config/config.js';
import { createDispatcher, type FairDispatcherSettings } from '../dispatcher/dispatcher.js';
import { createMonitorWorker, type MonitorWorkerParts } from '../monitors/workers/worker.js';
import type { BlobStore } from '../ports/blobStore.js';
import type { CommandHandler } from '../ports/commandHandler.js';
import type { EventStore } from '../ports/eventStore.js';
import type { JobQueue } from '../ports/jobQueue.js';
import type { RateLimiter } from '../ports/rateLimiter.js';
import type { ReadModelStore } from '../ports/readModelStore.js';
import { createPageViews } from '../render/pageViews.js';
import { webhookMetrics } from '../webhooks/workers/metrics.js';
import { createWebhookWorker, type WebhookSettings } from '../webhooks/workers/worker.js';
import { composeSearches } from './application.js';
import { composeRenderer } from './renderer.js';
import { scheduleRetention } from './retention.js';

/** A log line of a background worker: pino's JSON shape on stdout (logLines.ts), or nothing when logging is off. */
export type LogLine = (msg: string, fields?: Record<string, unknown>) => void;

/** The configuration the background workers read: each worker's slice (a new worker's slice is added here). */
export type WriteSideConfig = FairDispatcherSettings &
  MonitorWorkerParts['config'] &
  Parameters<typeof composeSearches>[1] &
  WebhookSettings &
  Pick<Config, 'retentionDays' | 'retentionSweepMin'> &
  Parameters<typeof composeRenderer>[0];

/**
 * What a background worker of the write side is given (docs/architecture.md, "Background workers"). The same in both
 * modes: on the pipeline thread (embedded) its stores are that thread's own connections; in distributed mode they are
 * the dispatcher process's (the shared event log and queue, its own read models).
 */
export interface WriteSideContext {
  config: WriteSideConfig;
  eventStore: EventStore;
  /** this process's (or thread's) read models, which the projector beside the worker keeps current */
  readModels: ReadModelStore;
  queries: ReadModelQueries;
  blobStore: BlobStore;
  /** the job queue the crawlers take jobs from */
  queue: JobQueue;
  /** appends through the deciders (optimistic concurrency, retried on a version conflict) */
  handle: CommandHandler;
  /** a key's submit rate, for a worker that submits on a key's behalf (memory embedded, NATS KV distributed) */
  rateLimiter: RateLimiter;
  /** resolves once the read models include `position` (the worker's own appends, before it reads them back) */
  projected(position: number): Promise<unknown>;
  log: LogLine;
  /** where the worker registers its Prometheus metrics; `/metrics` serves them (metrics.ts `writeSide`) */
  metrics: Registry;
  /** the key pepper: webhook signing secrets derive from it (docs/webhooks.md) */
  pepper: string;
  /** the only write side over these stores (embedded): work claimed by an earlier life of it is abandoned at once */
  sole: boolean;
}

/** One background worker: started once the write side's projector has caught up, stopped before its stores close. */
export interface BackgroundWorker {
  start(): Promise<void> | void;
  /** resolves once the worker is idle: work in progress is finished or handed back, nothing new starts */
  stop(): Promise<void>;
}

export interface BackgroundWorkerDefinition {
  /** for log lines and errors */
  name: string;
  create(ctx: WriteSideContext): BackgroundWorker;
}

/**
 * Every background worker of the write side, in start order (stopped in reverse). A new one (a scheduler, a delivery
 * worker) is one entry here: it then runs on the pipeline thread in embedded mode and in every dispatcher process in
 * distributed mode, so it must be idempotent when two dispatchers run it (decide on the event log, never on memory).
 */
export const BACKGROUND_WORKERS: readonly BackgroundWorkerDefinition[] = [
  {
    // SearchSubmitted → a job on the queue, in fair order by lane and key; a final CrawlFailed → its quota released
    // (dispatcher.ts; docs/fleet.md#lanes-and-fair-share)
    name: 'dispatcher',
    create: ({ eventStore, readModels, queries, queue, handle, projected, config, log }) =>
      createDispatcher({
        eventStore,
        readModels,
        queries,
        queue,
        handle,
        projected,
        settings: config,
        log,
      }),
  },
  {
    // rank tracking (docs/rank-tracking.md): the scheduler and the recorder; its decisions are on streams whose ids
    // are derived from what they decide (a run per slot, a check per job, a job per keyword of a run), so two agree
    name: 'monitors',
    create: (ctx) => {
      // monitors with pixel positions lay out each search's page (docs/rank-tracking.md): this side's own renderer,
      // whose Chromium starts at the first render, so a service without such monitors never starts one
      const renderer = composeRenderer(ctx.config);
      const worker = createMonitorWorker({
        eventStore: ctx.eventStore,
        readModels: ctx.readModels,
        queries: ctx.queries,
        handle: ctx.handle,
        limiter: ctx.rateLimiter,
        projected: ctx.projected,
        // the search service as the HTTP layer's is composed: rank tracking submits a run's searches through it
        searches: composeSearches(ctx, ctx.config),
        config: ctx.config,
        ...(renderer ? { pages: createPageViews({ blobStore: ctx.blobStore, renderer }) } : {}),
        log: ctx.log,
      });
      return {
        start: () => worker.start(),
        async stop() {
          await worker.stop();
          await renderer?.close();
        },
      };
    },
  },
  {
    // webhooks (docs/webhooks.md): the router turns the log into deliveries scheduled on derived ids, and every
    // attempt is claimed on its delivery's stream before the POST, so two dispatchers send each attempt once
    name: 'webhooks',
    create: (ctx) =>
      createWebhookWorker({
        eventStore: ctx.eventStore,
        readModels: ctx.readModels,
        queries: ctx.queries,
        handle: ctx.handle,
        projected: ctx.projected,
        pepper: ctx.pepper,
        config: ctx.config,
        sole: ctx.sole,
        onAttempt: webhookMetrics(ctx.metrics, ctx.queries),
        log: ctx.log,
      }),
  },
  {
    // jobs past SERP_RETENTION_DAYS purged every SERP_RETENTION_SWEEP_MIN minutes (retention.ts); a purge is decided
    // once per job, so two dispatchers sweeping is harmless
    name: 'retention',
    create: (ctx) => {
      let scheduled: { stop(): Promise<void> } | undefined;
      return {
        start() {
          scheduled = scheduleRetention(
            {
              eventStore: ctx.eventStore,
              blobStore: ctx.blobStore,
              handle: ctx.handle,
              queries: ctx.queries,
              compact: () => ctx.readModels.compact(),
              projected: ctx.projected,
              retentionDays: ctx.config.retentionDays,
            },
            ctx.config.retentionSweepMin,
            ctx.log,
            ctx.metrics,
          );
        },
        stop: async () => scheduled?.stop(),
      };
    },
  },
];

/** a registry for the write side's workers (one per process or thread, never prom-client's global one) */
export const createWriteSideRegistry = (): Registry => new Registry();

/**
 * Starts `workers` in order; if one fails to start, the ones started are stopped and the error is thrown. `stop`
 * stops them in reverse order, each even when one before it failed (the failure is logged).
 */
export const startBackgroundWorkers = async (
  ctx: WriteSideContext,
  workers: readonly BackgroundWorkerDefinition[] = BACKGROUND_WORKERS,
): Promise<{ stop(): Promise<void> }> => {
  const started: Array<{ name: string; worker: BackgroundWorker }> = [];
  const stop = async () => {
    for (const { name, worker } of started.splice(0).reverse()) {
      try {
        await worker.stop();
      } catch (err) {
        ctx.log('background worker failed to stop', { worker: name, reason: (err as Error).message });
      }
    }
  };
  try {
    for (const definition of workers) {
      const worker = definition.create(ctx);
      await worker.start();
      started.push({ name: definition.name, worker });
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { stop };
};
