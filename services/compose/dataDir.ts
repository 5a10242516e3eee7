import { existsSync } from 'node:fs';
import type { ReadModelQueries } from '../../projections/index.js';
import { createCommandHandler } from '../application/commandHandler.js';
import type { Config } from '../config/config.js';
import type { BlobStore } from '../ports/blobStore.js';
import type { CommandHandler } from '../ports/commandHandler.js';
import type { EventStore } from '../ports/eventStore.js';
import { PROJECTOR_CHECKPOINT } from '../projector/projector.js';
import { type Core, dataPaths, openCore, openStores } from './embedded/core.js';

/**
 * docs/operations.md#secrets-and-the-admin-token: whoever creates the secrets prints the admin token, once (stderr, so
 * `--json` output stays clean).
 */
export const announceAdminToken = (config: Config, core: Pick<Core, 'createdAdminToken' | 'secrets'>) => {
  if (!core.createdAdminToken) return;
  console.error(`admin token (shown once, kept in ${config.dataDir}/secrets.json): ${core.secrets.adminToken}`);
};

/**
 * The data directory opened by this process alone (no service runs on it): event store, read models and a projector
 * of its own. Creates the directory and its secrets on first use, and then prints the admin token.
 */
export const openLocalCore = async (config: Config): Promise<Core> => {
  const core = await openCore(config);
  announceAdminToken(config, core);
  return core;
};

/** Maintenance commands read an existing log: a wrong `--data` must not quietly create an empty one. */
export const requireEventStore = (config: Config) => {
  if (!existsSync(dataPaths(config.dataDir).events)) {
    throw new Error(`no event store in ${config.dataDir} (wrong --data or SERP_DATA_DIR?)`);
  }
};

/** Wraps a command handler to remember the last global position it appended at. */
export const trackAppends = (inner: CommandHandler) => {
  let last: number | undefined;
  const handle: CommandHandler = async (stream, decider, command, ctx) => {
    const res = await inner(stream, decider, command, ctx);
    if (res.position !== undefined) last = Math.max(last ?? 0, res.position);
    return res;
  };
  return { handle, last: () => last };
};

export interface BesideService {
  /** the shared SQLite event store, which several processes may append to */
  eventStore: EventStore;
  /** a command handler on it; what it appends is waited for before `besideService` returns */
  handle: CommandHandler;
  /** the service's read models, to READ only: its projector is their one writer */
  queries: ReadModelQueries;
  /** the data directory's raw HTML */
  blobStore: BlobStore;
  /** resolves true once the service's projector has passed `position`, false after `timeoutMs` */
  projected(position: number, timeoutMs?: number): Promise<boolean>;
  /** gives the space of rows the service's projector deleted back to the file system */
  compactReadModels(): void;
}

/**
 * Runs `work` on the data directory of a running service WITHOUT a projector of its own: two projectors on one
 * read.db would apply the same events twice. Events go straight into the shared event store, the service's projector
 * picks them up by polling, and we wait until its checkpoint in read.db has passed our last append, so that the
 * service answers with them by the time the command exits. `projected` is false when the wait ran out.
 */
export const besideService = async <T>(
  config: Config,
  work: (shared: BesideService) => Promise<T>,
  options: { timeoutMs?: number } = {},
): Promise<{ result: T; projected: boolean }> => {
  const stores = openStores(config.dataDir);
  const { eventStore, readModels, queries, blobStore } = stores;
  try {
    const projected = async (position: number, timeoutMs = options.timeoutMs ?? 15_000) => {
      const deadline = Date.now() + timeoutMs;
      while (readModels.checkpoint(PROJECTOR_CHECKPOINT) < position) {
        if (Date.now() > deadline) return false;
        await new Promise((r) => setTimeout(r, 50));
      }
      return true;
    };
    const tracked = trackAppends(createCommandHandler(eventStore));
    const compactReadModels = () => readModels.compact();
    const result = await work({ eventStore, handle: tracked.handle, queries, blobStore, projected, compactReadModels });
    const last = tracked.last();
    return { result, projected: last === undefined || (await projected(last)) };
  } finally {
    await stores.close();
  }
};
