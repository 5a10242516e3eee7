import type { ReadModelQueries } from '../../../projections/index.js';
import type { Config } from '../../config/config.js';
import type { CommandHandler } from '../../ports/commandHandler.js';
import type { EventStore } from '../../ports/eventStore.js';
import type { RateLimiter } from '../../ports/rateLimiter.js';
import type { ReadModelStore } from '../../ports/readModelStore.js';
import type { SearchSubmitter } from '../../ports/searchSubmitter.js';
import type { PageViews } from '../../render/pageViews.js';
import { createMonitorVersions } from '../commands/monitorVersions.js';
import { createAlerter } from './alerter.js';
import { createRankRecorder } from './recorder.js';
import { createMonitorScheduler } from './scheduler.js';

export interface MonitorWorkerParts {
  eventStore: EventStore;
  readModels: ReadModelStore;
  queries: ReadModelQueries;
  handle: CommandHandler;
  /** the key's submit rate (in memory in embedded mode, NATS KV in distributed mode) */
  limiter: RateLimiter;
  /** resolves once the read models hold `position` */
  projected(position: number): Promise<unknown>;
  /** the search service the scheduler submits a run's searches through: the composition's (composeSearches) */
  searches: SearchSubmitter;
  config: Pick<Config, 'monitorTickMs' | 'monitorSpreadMaxS'>;
  /** lays out searches' pages for monitors with pixel positions (docs/rank-tracking.md); absent: none measured */
  pages?: Pick<PageViews, 'positions'>;
  log?: (msg: string, fields: Record<string, unknown>) => void;
  now?: () => Date;
}

/**
 * Rank tracking's background worker (docs/rank-tracking.md): the scheduler, ticking every `monitorTickMs`, the
 * recorder following the log, and the alerter raising each completed run's alerts from the recorder's checks
 * (docs/rank-tracking.md#alerts). It runs on the write side, beside the dispatcher and retention: the pipeline thread
 * in embedded mode, every dispatcher process in distributed mode (two of them are safe: every decision is on a
 * stream whose id is derived from what it decides). `stop` waits for a tick in progress.
 */
export const createMonitorWorker = (parts: MonitorWorkerParts) => {
  const versions = createMonitorVersions(parts.eventStore);
  const recorder = createRankRecorder(parts);
  const alerter = createAlerter(parts);
  const scheduler = createMonitorScheduler({
    queries: parts.queries,
    handle: parts.handle,
    searches: parts.searches,
    limiter: parts.limiter,
    recorder,
    versions,
    projected: parts.projected,
    spreadMaxMs: parts.config.monitorSpreadMaxS * 1000,
    now: parts.now,
    log: parts.log,
  });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const tick = () => {
    if (running || stopped) return;
    running = scheduler
      .tick()
      .catch((err) => parts.log?.('monitor tick failed', { reason: (err as Error).message }))
      .finally(() => {
        running = undefined;
      });
  };
  return {
    scheduler,
    recorder,
    async start() {
      await recorder.start();
      await alerter.start();
      timer = setInterval(tick, parts.config.monitorTickMs);
      timer.unref();
      tick();
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      await alerter.stop();
      await recorder.stop();
    },
  };
};
