import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { toCompat } from '../../parser/index.js';
import { allProjections } from '../../projections/index.js';
import { createFsBlobStore } from '../adapters/blobStore/fs.js';
import { createSqliteEventStore } from '../adapters/eventStore/sqlite.js';
import { createInProcessJobQueue } from '../adapters/jobQueue/inProcess.js';
import { createSqliteReadModelStore, type ReadModelStore } from '../adapters/readModel/sqlite.js';
import { buildApp } from '../api/app.js';
import { createCommandHandler } from '../application/commandHandler.js';
import { createKeyCommands } from '../application/keys.js';
import { createSearchService } from '../application/searches.js';
import { createConfiguredCrawler } from '../crawler/setup.js';
import { createCrawlWorker } from '../crawler/worker.js';
import { createDispatcher } from '../dispatcher/dispatcher.js';
import { createLocationResolver } from '../geo/locations.js';
import type { EventStore } from '../ports/eventStore.js';
import { createProjector, type Projector } from '../projector/projector.js';
import type { Config } from './config.js';
import { loadOrCreateSecrets, type Secrets } from './secrets.js';

export const dataPaths = (dataDir: string) => ({
  events: join(dataDir, 'events.db'),
  readModels: join(dataDir, 'read.db'),
  blobs: join(dataDir, 'blobs'),
  server: join(dataDir, 'server.json'),
  lock: join(dataDir, 'serve.lock'),
});

/** whether a process with this pid exists (EPERM: it exists but belongs to someone else) */
export const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * One `serve` per data directory: two would each run a dispatcher, a queue and a projector over the same files.
 * The lock names its pid; a lock left by a process that died (kill -9) is taken over, so a crash never blocks a restart.
 */
const takeServeLock = (path: string) => {
  for (let tries = 0; tries < 2; tries++) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx' });
      return () => {
        if (readFileSync(path, 'utf8').trim() === String(process.pid)) rmSync(path, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) {
        throw new Error(
          `another serp-api serve (pid ${holder}) is using ${dirname(path)}: stop it, or give this one its own --data`,
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw new Error(`could not take ${path}`);
};

export interface Core {
  eventStore: EventStore;
  readModels: ReadModelStore;
  projector: Projector;
  secrets: Secrets;
  createdAdminToken: boolean;
  handle: ReturnType<typeof createCommandHandler>;
  keys: ReturnType<typeof createKeyCommands>;
  close(): Promise<void>;
}

/** The event store, read models and projector, caught up: what the server and the offline CLI commands share. */
export const openCore = async (config: Config): Promise<Core> => {
  mkdirSync(config.dataDir, { recursive: true });
  const paths = dataPaths(config.dataDir);
  const { secrets, createdAdminToken } = loadOrCreateSecrets(config.dataDir, {
    keyPepper: config.keyPepper,
    adminToken: config.adminToken,
    linkSecret: config.linkSecret,
  });
  const eventStore = createSqliteEventStore({ path: paths.events });
  const readModels = createSqliteReadModelStore(paths.readModels);
  const projector = createProjector({ eventStore, readModels, projections: allProjections });
  await projector.start();
  const handle = createCommandHandler(eventStore);
  const keys = createKeyCommands({ handle, pepper: secrets.keyPepper, tiers: config.tiers });
  return {
    eventStore,
    readModels,
    projector,
    secrets,
    createdAdminToken,
    handle,
    keys,
    async close() {
      await projector.stop();
      await eventStore.close();
      readModels.close();
    },
  };
};

export interface Embedded {
  app: FastifyInstance;
  url: string;
  core: Core;
  close(): Promise<void>;
}

/** `serp-api serve`: every role in one process, no servers (DESIGN.md §2). */
export const startEmbedded = async (config: Config, options: { logger?: boolean } = {}): Promise<Embedded> => {
  const paths = dataPaths(config.dataDir);
  mkdirSync(config.dataDir, { recursive: true });
  const releaseLock = takeServeLock(paths.lock);
  let core: Core;
  try {
    core = await openCore(config);
  } catch (err) {
    releaseLock();
    throw err;
  }
  const blobStore = createFsBlobStore(paths.blobs);
  const queue = createInProcessJobQueue({
    ackWaitMs: 60_000,
    maxDeliver: 5,
    backoffMs: [1_000, 5_000, 15_000],
    dedupeWindowMs: 10 * 60_000,
  });
  const crawler = createConfiguredCrawler({
    fetcher: config.fetcher,
    googleOrigin: config.googleOrigin,
    proxyUrls: config.proxyUrls,
    dataDir: config.dataDir,
  });
  const locations = createLocationResolver(config.dataDir);
  const worker = createCrawlWorker({
    queue,
    handle: core.handle,
    crawler,
    blobStore,
    concurrency: config.crawlerConcurrency,
    workerId: `embedded-${process.pid}-${randomBytes(3).toString('hex')}`,
  });
  const dispatcher = createDispatcher({
    eventStore: core.eventStore,
    readModels: core.readModels,
    queue,
    handle: core.handle,
  });
  const searches = createSearchService({
    eventStore: core.eventStore,
    readModels: core.readModels,
    handle: core.handle,
    cacheTtlS: config.cacheTtlS,
  });
  const app = await buildApp({
    config,
    secrets: core.secrets,
    readModels: core.readModels,
    searches,
    keys: core.keys,
    blobStore,
    projector: core.projector,
    toCompat,
    resolveLocation: (name) => locations.resolveLocation(name),
    logger: options.logger,
  });
  await dispatcher.start();
  worker.start();
  const url = await app.listen({ port: config.port, host: config.host });
  writeFileSync(paths.server, `${JSON.stringify({ pid: process.pid, url }, null, 2)}\n`);
  let closing: Promise<void> | undefined;
  return {
    app,
    url,
    core,
    close: () => {
      closing ??= (async () => {
        await app.close();
        await worker.stop();
        await dispatcher.stop();
        await queue.close();
        await crawler.close();
        locations.close();
        await core.close();
        rmSync(paths.server, { force: true });
        releaseLock();
      })();
      return closing;
    },
  };
};
