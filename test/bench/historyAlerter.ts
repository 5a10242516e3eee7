import type { HistoryPoint } from '../../contracts/monitors.js';
import { alertsOfRun, type DomainState, type KeywordComparison, type RunFailure } from '../../domain/monitor/alerts.js';
import type { MonitorVersions } from '../../services/monitors/commands/monitorVersions.js';
import { type createAlerter, raiseAlerts } from '../../services/monitors/workers/alerter.js';
import { createReactor, type Handled, reactorDeps } from '../../services/reactor/reactor.js';

const stateOfPoints = (points: HistoryPoint[]) =>
  new Map<string, DomainState>(
    points.map((p) => [p.domain, { position: p.position ?? 0, url: p.url, features: p.features }]),
  );

/**
 * The alerter as it was before it followed the checks (services/monitors/alerter.ts): each completed run waits until
 * the read models hold it, then every keyword's whole history is read for the search before it. Kept only as the
 * baseline test/bench/rankLatency.ts measures the alerter against, and the oracle test/monitors/workers/alerter.test.ts
 * holds the alerter's alerts to; the same reactor (its name, its checkpoint) deciding the same alerts, so the two
 * compare like for like.
 */
export const createHistoryAlerter = (
  deps: Parameters<typeof createAlerter>[0] & {
    /** a run's keywords: its monitor's at the version it references */
    versions: MonitorVersions;
  },
) => {
  const { queries, versions } = deps;
  const raise = async (e: Handled<'MonitorRunCompleted'>) => {
    const { runId, monitorId, keyId, trigger } = e.data;
    if (trigger === 'backfill') return;
    const monitor = queries.monitors.byId(monitorId);
    const run = queries.monitors.run(runId)?.run;
    if (!monitor?.alerts || !run) return;
    const comparisons: KeywordComparison[] = [];
    const failures: RunFailure[] = [];
    for (const keyword of new Set(await versions.ofRun(run))) {
      const points: HistoryPoint[] = [];
      for (const batch of queries.ranks.points(monitorId, { from: 0, to: 8.64e15 }, { keyword })) points.push(...batch);
      const mine = points.filter((p) => p.run_id === runId && p.keyword === keyword);
      if (mine.length === 0) continue;
      const at = mine[0]!.checked_at;
      if (mine[0]!.status === 'failed') {
        failures.push({ keyword, failure: mine[0]!.failure ?? 'failed', at });
        continue;
      }
      const earlier = points.filter(
        (p) => p.keyword === keyword && p.run_id !== runId && p.status !== 'failed' && p.checked_at <= at,
      );
      const lastJob = earlier[earlier.length - 1]?.job_id;
      const before = lastJob ? earlier.filter((p) => p.job_id === lastJob) : [];
      comparisons.push({
        keyword,
        at,
        after: stateOfPoints(mine),
        ...(before.length ? { before: stateOfPoints(before) } : {}),
      });
    }
    const alerts = alertsOfRun(runId, monitor.alerts, run.domains, comparisons, failures);
    await raiseAlerts(deps, { runId, monitorId, keyId }, alerts);
  };
  return createReactor(
    {
      name: 'monitor-alerter',
      handles: ['MonitorRunCompleted'],
      needsProjection: true,
      async handle(events) {
        for (const e of events) await raise(e);
      },
    },
    reactorDeps(deps),
  );
};
