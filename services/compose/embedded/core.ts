import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type ReadModelQueries, readModelQueries } from '../../../projections/index.js';
import { createFsBlobStore } from '../../adapters/blobStore/fs.js';
import { createSqliteEventStore, type SqliteEventStore } from '../../adapters/eventStore/sqlite.js';
import { createSqliteReadModelStore } from '../../adapters/readModel/sqlite.js';
import { createCommandHandler } from '../../application/commandHandler.js';
import type { Config } from '../../config/config.js';
import type { BlobStore } from '../../ports/blobStore.js';
import type { EventStore } from '../../ports/eventStore.js';
import type { ReadModelStore } from '../../ports/readModelStore.js';
import { PRIVATE_FILE_MODE, privateDir, privateFile } from '../../privateFiles.js';
import { createReadModelProjector, type Projector } from '../../projector/projector.js';
import { startWriterThread } from '../../threads/writerThread.js';
import { moveInlineResults } from './migrations.js';
import { loadOrCreateSecrets, type Secrets } from './secrets.js';

/** Where an embedded data directory keeps each store. */
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
 * The lock names its pid; a lock left by a process that died (kill -9) is taken over, so a crash never blocks a
 * restart. Returns the release function.
 */
export const takeServeLock = (dataDir: string) => {
  const path = dataPaths(dataDir).lock;
  privateDir(dataDir);
  for (let tries = 0; tries < 2; tries++) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx', mode: PRIVATE_FILE_MODE });
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

/** The embedded stores of a data directory: SQLite event store and read models, raw HTML as files. */
export interface Stores {
  eventStore: EventStore;
  readModels: ReadModelStore;
  queries: ReadModelQueries;
  blobStore: BlobStore;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** the event store's group commits on a thread of their own (`serve`; services/threads/writerThread.ts) */
  writerThread?: boolean;
  /** told each commit's last position (the pipeline thread's subscriptions are woken with it) */
  onCommitted?: (position: number) => void;
}

export const openStores = (dataDir: string, options: StoreOptions = {}): Stores & { eventStore: SqliteEventStore } => {
  privateDir(dataDir);
  const paths = dataPaths(dataDir);
  privateFile(paths.events);
  privateFile(paths.readModels);
  const eventStore = createSqliteEventStore({
    path: paths.events,
    ...(options.writerThread ? { groupWriter: startWriterThread } : {}),
    onCommitted: options.onCommitted,
  });
  const readModels = createSqliteReadModelStore(paths.readModels);
  return {
    eventStore,
    readModels,
    queries: readModelQueries(readModels),
    blobStore: createFsBlobStore(paths.blobs),
    async close() {
      await eventStore.close();
      readModels.close();
    },
  };
};

export interface Core extends Stores {
  projector: Projector;
  secrets: Secrets;
  createdAdminToken: boolean;
  handle: ReturnType<typeof createCommandHandler>;
  /** resolves once the read models include `position` */
  projected(position: number): Promise<void>;
}

/**
 * The stores, secrets, command side and a projector caught up with the log: what the server and the CLI commands
 * that run with no service on the data directory share. Their application services are composed over it
 * (services/compose/application.ts).
 */
export const openCore = async (
  config: Pick<Config, 'dataDir' | 'keyPepper' | 'adminToken' | 'linkSecret'>,
  options: StoreOptions & {
    /**
     * the projector runs elsewhere (the pipeline thread): given the opened stores, it starts it and answers for it
     * here; undefined: a projector on this thread
     */
    projectorElsewhere?: (stores: Stores & { eventStore: SqliteEventStore }) => Projector;
  } = {},
): Promise<Core & { eventStore: SqliteEventStore }> => {
  const { secrets, createdAdminToken } = loadOrCreateSecrets(config.dataDir, {
    keyPepper: config.keyPepper,
    adminToken: config.adminToken,
    linkSecret: config.linkSecret,
  });
  const stores = openStores(config.dataDir, options);
  try {
    await moveInlineResults(dataPaths(config.dataDir).events, stores.blobStore);
  } catch (err) {
    await stores.close();
    throw err;
  }
  const projector =
    options.projectorElsewhere?.(stores) ??
    createReadModelProjector({
      eventStore: stores.eventStore,
      readModels: stores.readModels,
      blobStore: stores.blobStore,
    });
  try {
    await projector.start();
  } catch (err) {
    await stores.close();
    throw err;
  }
  return {
    ...stores,
    projector,
    secrets,
    createdAdminToken,
    handle: createCommandHandler(stores.eventStore),
    projected: (position) => projector.waitFor(position),
    async close() {
      await projector.stop();
      await stores.close();
    },
  };
};
