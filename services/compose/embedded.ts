import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { createInProcessJobQueue } from '../adapters/jobQueue/inProcess.js';
import { createMemoryRateLimiter } from '../adapters/rateLimiter/memory.js';
import { createServer } from '../api/server.js';
import { createSearchService } from '../application/searches.js';
import { createCrawlWorker } from '../crawler/worker.js';
import { createDispatcher } from '../dispatcher/dispatcher.js';
import { createLocationResolver } from '../geo/locations.js';
import { createMetrics } from '../metrics/metrics.js';
import { PROJECTOR_CHECKPOINT } from '../projector/projector.js';
import type { Config } from './config.js';
import { type Core, dataPaths, openCore, takeServeLock } from './core.js';
import { crawlerFromConfig } from './crawler.js';
import { jsonLines } from './logLines.js';
import { scheduleRetention } from './retention.js';
import { packageVersion } from './version.js';

export interface Embedded {
  app: FastifyInstance;
  url: string;
  core: Core;
  /** lines for the operator: what start-up decided differently from the configuration (a fetcher fallback) */
  warnings: string[];
  close(): Promise<void>;
}

/** `serp-api serve`: every role in one process, no servers (DESIGN.md §2). */
export const startEmbedded = async (config: Config, options: { logger?: boolean } = {}): Promise<Embedded> => {
  const paths = dataPaths(config.dataDir);
  const releaseLock = takeServeLock(config.dataDir);
  let core: Core;
  try {
    core = await openCore(config, { writerThread: true });
  } catch (err) {
    releaseLock();
    throw err;
  }
  const queue = createInProcessJobQueue({
    ackWaitMs: 60_000,
    maxDeliver: 5,
    backoffMs: [1_000, 5_000, 15_000],
    dedupeWindowMs: 10 * 60_000,
  });
  // one resolver for the process: the api validates `location` with it and the crawler targets with it
  const locations = createLocationResolver(config.dataDir);
  // the shipped geotargets index takes ~0.4 s to build: pay it at start, not on the first request with a location
  locations.searchLocations('warm', 1);
  const { crawler, warning } = await crawlerFromConfig(config, locations);
  const worker = createCrawlWorker({
    queue,
    handle: core.handle,
    crawler,
    blobStore: core.blobStore,
    concurrency: config.crawlerConcurrency,
    workerId: `embedded-${process.pid}-${randomBytes(3).toString('hex')}`,
    log: jsonLines(config.logLevel, options.logger),
  });
  const metrics = createMetrics({
    queueStats: () => queue.stats(),
    projection: async () => ({
      head: await core.eventStore.headPosition(),
      projected: core.readModels.checkpoint(PROJECTOR_CHECKPOINT),
    }),
  });
  await metrics.follow(core.eventStore);
  const dispatcher = createDispatcher({
    eventStore: core.eventStore,
    readModels: core.readModels,
    queue,
    handle: core.handle,
  });
  const searches = createSearchService({
    eventStore: core.eventStore,
    queries: core.queries,
    handle: core.handle,
    cacheTtlS: config.cacheTtlS,
  });
  const rateLimiter = createMemoryRateLimiter();
  const app = await createServer(
    {
      config,
      secrets: core.secrets,
      queries: core.queries,
      searches,
      keys: core.keys,
      blobStore: core.blobStore,
      rateLimiter,
      projected: (position) => core.projector.waitFor(position),
      resolveLocation: (name) => locations.resolveLocation(name),
      locations: {
        search: (query, limit) => locations.searchLocations(query, limit),
        byId: (id) => locations.locationById(id),
      },
      version: packageVersion(),
      metrics,
    },
    { logLevel: config.logLevel, logger: options.logger, timeouts: config.timeouts },
  );
  await dispatcher.start();
  worker.start();
  const retention = scheduleRetention(
    {
      eventStore: core.eventStore,
      blobStore: core.blobStore,
      handle: core.handle,
      queries: core.queries,
      compact: () => core.readModels.compact(),
      projected: (position) => core.projector.waitFor(position),
      retentionDays: config.retentionDays,
    },
    config.retentionSweepMin,
    jsonLines(config.logLevel, options.logger) ?? (() => undefined),
  );
  const url = await app.listen({ port: config.port, host: config.host });
  writeFileSync(paths.server, `${JSON.stringify({ pid: process.pid, url }, null, 2)}\n`);
  let closing: Promise<void> | undefined;
  return {
    app,
    url,
    core,
    warnings: warning ? [warning] : [],
    close: () => {
      closing ??= (async () => {
        await app.close();
        await retention.stop();
        await metrics.stop();
        await worker.stop();
        await dispatcher.stop();
        await queue.close();
        await crawler.close();
        await rateLimiter.close();
        locations.close();
        await core.close();
        rmSync(paths.server, { force: true });
        releaseLock();
      })();
      return closing;
    },
  };
};
