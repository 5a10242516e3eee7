import { Counter, type Registry } from 'prom-client';
import type { ReadModelQueries } from '../../projections/index.js';
import { type SweepReport, sweepRetention } from '../application/retention.js';
import type { BlobStore } from '../ports/blobStore.js';
import type { CommandHandler } from '../ports/commandHandler.js';
import type { EventStore } from '../ports/eventStore.js';

export interface RetentionParts {
  eventStore: EventStore;
  blobStore: BlobStore;
  handle: CommandHandler;
  queries: ReadModelQueries;
  /** gives deleted rows' space back (ReadModelStore.compact) */
  compact(): void;
  /** resolves once the read models hold `position` (false: gave up waiting) */
  projected(position: number): Promise<unknown>;
  retentionDays: number;
  before?: Date;
  now?: () => Date;
}

/** One sweep (services/application/retention.ts), then the read models' deleted rows give their space back. */
export const runRetentionSweep = async (parts: RetentionParts): Promise<SweepReport> => {
  const report = await sweepRetention({
    eventStore: parts.eventStore,
    blobStore: parts.blobStore,
    handle: parts.handle,
    jobsBetween: (after, before, limit) => parts.queries.jobs.between(after, before, limit),
    retentionDays: parts.retentionDays,
    before: parts.before,
    now: parts.now,
  });
  if (report.position !== undefined) {
    await parts.projected(report.position);
    parts.compact();
  }
  return report;
};

/**
 * Sweeps every `everyMin` minutes (the first a minute after start), one at a time; a failed sweep is logged and the
 * next one tries again. `stop` waits for a sweep in progress.
 */
export const scheduleRetention = (
  parts: RetentionParts,
  everyMin: number,
  log: (msg: string, fields: Record<string, unknown>) => void,
  metrics?: Registry,
) => {
  if (everyMin <= 0) return { stop: async () => undefined };
  const sweeps = metrics
    ? new Counter({
        name: 'serp_retention_sweeps_total',
        help: 'Retention sweeps run by this process, by outcome (ok, failed)',
        labelNames: ['outcome'] as const,
        registers: [metrics],
      })
    : undefined;
  const purged = metrics
    ? new Counter({
        name: 'serp_retention_purged_jobs_total',
        help: 'Jobs purged past SERP_RETENTION_DAYS by this process’s sweeps',
        registers: [metrics],
      })
    : undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const tick = () => {
    if (running || stopped) return;
    running = runRetentionSweep(parts)
      .then((r) => {
        sweeps?.inc({ outcome: 'ok' });
        purged?.inc(r.purged);
        if (r.purged > 0) log('retention sweep', { ...r });
      })
      .catch((err) => {
        sweeps?.inc({ outcome: 'failed' });
        log('retention sweep failed', { reason: err instanceof Error ? err.message : String(err) });
      })
      .finally(() => {
        running = undefined;
      });
  };
  const first = setTimeout(tick, Math.min(60_000, everyMin * 60_000));
  const timer = setInterval(tick, everyMin * 60_000);
  first.unref();
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(timer);
      await running;
    },
  };
};
