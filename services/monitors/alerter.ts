import { streams } from '../../contracts/events.js';
import type { HistoryPoint } from '../../contracts/monitors.js';
import { alertDecider, alertsOfRun, type DomainState, type KeywordComparison } from '../../domain/monitor/alerts.js';
import type { ReadModelQueries } from '../../projections/index.js';
import type { CommandHandler } from '../application/commandHandler.js';
import type { EventStore } from '../ports/eventStore.js';
import type { ReadModelStore } from '../ports/readModelStore.js';
import { createReactor, type Handled, type ReactorDeps, reactorDeps } from '../reactor/reactor.js';
import type { MonitorVersions } from './monitorVersions.js';

const stateOf = (points: HistoryPoint[]) =>
  new Map<string, DomainState>(
    points.map((p) => [p.domain, { position: p.position ?? 0, url: p.url, features: p.features }]),
  );

/**
 * Raises a completed run's alerts (docs/webhooks.md): it follows the log from a checkpoint of its own and, for each
 * `MonitorRunCompleted` of a monitor with alert settings, compares each keyword's search in the run with the keyword's
 * previous successful search in the history, and records what the settings ask for as `MonitorAlertRaised` events on
 * the run's alert stream (once: a second worker decides nothing). Backfill runs raise none.
 */
export const createAlerter = (deps: {
  eventStore: EventStore;
  readModels: ReadModelStore;
  queries: ReadModelQueries;
  /** the reactor's options (tests): a poison's report, the checkpoint policy */
  onPoison?: ReactorDeps['onPoison'];
  checkpoint?: ReactorDeps['checkpoint'];
  handle: CommandHandler;
  projected(position: number): Promise<unknown>;
  /** a run's keywords (its monitor's at the version it references) */
  versions: MonitorVersions;
  now?: () => Date;
}) => {
  const { queries } = deps;

  const raise = async (e: Handled<'MonitorRunCompleted'>) => {
    const { runId, monitorId, keyId, trigger } = e.data;
    if (trigger === 'backfill') return;
    const monitor = queries.monitors.byId(monitorId);
    const run = queries.monitors.run(runId)?.run;
    if (!monitor?.alerts || !run) return;
    const comparisons: KeywordComparison[] = [];
    const failures: Array<{ keyword: string; failure: string; at: string }> = [];
    for (const keyword of new Set(await deps.versions.ofRun(run))) {
      const points: HistoryPoint[] = [];
      for (const batch of queries.ranks.points(monitorId, { from: 0, to: 8.64e15 }, { keyword })) points.push(...batch);
      const mine = points.filter((p) => p.run_id === runId && p.keyword === keyword);
      if (mine.length === 0) continue;
      const at = mine[0]!.checked_at;
      if (mine[0]!.status === 'failed') {
        failures.push({ keyword, failure: mine[0]!.failure ?? 'failed', at });
        continue;
      }
      // the keyword's previous successful search: the last job before this one whose points are not failed
      const earlier = points.filter(
        (p) => p.keyword === keyword && p.run_id !== runId && p.status !== 'failed' && p.checked_at <= at,
      );
      const lastJob = earlier[earlier.length - 1]?.job_id;
      const before = lastJob ? earlier.filter((p) => p.job_id === lastJob) : [];
      comparisons.push({ keyword, at, after: stateOf(mine), ...(before.length ? { before: stateOf(before) } : {}) });
    }
    const alerts = alertsOfRun(runId, monitor.alerts, run.domains, comparisons, failures);
    if (alerts.length === 0) return;
    await deps.handle(streams.monitorAlerts(runId), alertDecider, {
      type: 'RaiseAlerts',
      runId,
      monitorId,
      keyId,
      alerts,
      now: (deps.now?.() ?? new Date()).toISOString(),
    });
  };

  return createReactor(
    {
      name: 'monitor-alerter',
      handles: ['MonitorRunCompleted'],
      // the run's checks are read in the history
      needsProjection: true,
      async handle(events) {
        for (const e of events) await raise(e);
      },
    },
    reactorDeps(deps),
  );
};
