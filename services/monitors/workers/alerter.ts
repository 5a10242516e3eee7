import { type DomainRank, type EventOf, streams } from '../../../contracts/events.js';
import type { HistoryPoint } from '../../../contracts/monitors.js';
import {
  alertDecider,
  alertsOfRun,
  type DomainState,
  type KeywordComparison,
  type RunFailure,
} from '../../../domain/monitor/alerts.js';
import type { ReadModelQueries } from '../../../projections/index.js';
import type { CommandHandler } from '../../application/commandHandler.js';
import type { EventStore } from '../../ports/eventStore.js';
import type { ReadModelStore } from '../../ports/readModelStore.js';
import { createReactor, type Handled, type ReactorDeps, reactorDeps } from '../../reactor/reactor.js';
import type { MonitorVersions } from '../commands/monitorVersions.js';

type Check = EventOf<'MonitorKeywordChecked'>['data'];

const stateOfRanks = (ranks: readonly DomainRank[]) =>
  new Map<string, DomainState>(
    ranks.map((r) => [
      r.domain,
      {
        position: r.position ?? 0,
        url: r.url ?? null,
        features: r.features,
        ...(r.aboveTheFold === undefined ? {} : { aboveTheFold: r.aboveTheFold }),
      },
    ]),
  );

/** a keyword's latest successful search seen in the log */
interface Latest {
  at: string;
  runId: string;
  state: Map<string, DomainState>;
}

/** a run being followed from its start: its domains, and each check with what it is compared to */
interface Followed {
  domains: readonly string[];
  checks: Array<{ check: Check; before: Map<string, DomainState> | undefined | 'unknown' }>;
}

const MAX_RUNS = 1_000;
const MAX_KEYWORDS = 200_000;

/**
 * Raises a completed run's alerts (docs/rank-tracking.md#alerts), from what the recorder derived: it follows the log
 * from a checkpoint of its own and compares each keyword's check in a run (`MonitorKeywordChecked`, as the log hands
 * it over) with the keyword's previous successful search, kept from the checks that passed before it. When the run
 * completes it records what the monitor's settings ask for as `MonitorAlertRaised` events on the run's alert stream
 * (once: a second worker decides nothing). Backfill runs raise none.
 *
 * It waits for no projection and reads no history on the way: only a keyword whose previous search it has not seen
 * (its first run since this process started, or one whose searches came out of order) is looked up, in the history's
 * newest month back, once the read models hold the run; and a run it did not follow from its start (started before a
 * restart, or forgotten past `MAX_RUNS` open at once) is read back from its own stream.
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
  /** a run's keywords (its monitor's at the version it references): read by `fromHistory` only */
  versions?: MonitorVersions;
  /**
   * true: wait until the read models hold each completed run, then read every keyword's whole history for the search
   * before it (how the alerter worked before it followed the checks; kept only as the baseline
   * test/bench/rankLatency.ts measures against). Default false.
   */
  fromHistory?: boolean;
  now?: () => Date;
}) => {
  if (deps.fromHistory) return createHistoryAlerter(deps);
  const { queries } = deps;
  const latest = new Map<string, Latest>();
  const runs = new Map<string, Followed>();
  const keyOf = (monitorId: string, keyword: string) => `${monitorId}\u0000${keyword}`;

  /** what `check` is compared with, from the checks seen; 'unknown' when none seen can say */
  const beforeOf = (check: Check): Map<string, DomainState> | undefined | 'unknown' => {
    const last = latest.get(keyOf(check.monitorId, check.keyword));
    return last && last.at <= check.checkedAt && last.runId !== check.runId ? last.state : 'unknown';
  };

  const remember = (check: Check) => {
    if (!check.ok) return;
    const key = keyOf(check.monitorId, check.keyword);
    const last = latest.get(key);
    if (last && last.at > check.checkedAt) return;
    if (latest.size >= MAX_KEYWORDS) latest.clear();
    latest.set(key, { at: check.checkedAt, runId: check.runId, state: stateOfRanks(check.ranks) });
  };

  /** a run not followed from its start: its domains and checks from its own stream */
  const readRun = async (runId: string): Promise<Followed | undefined> => {
    const { events } = await deps.eventStore.readStream(streams.monitorRun(runId));
    const started = events.find((e) => e.type === 'MonitorRunStarted');
    if (!started) return undefined;
    return {
      domains: (started.data as EventOf<'MonitorRunStarted'>['data']).domains,
      checks: events
        .filter((e) => e.type === 'MonitorKeywordChecked')
        .map((e) => ({ check: e.data as Check, before: 'unknown' as const })),
    };
  };

  const raise = async (e: Handled<'MonitorRunCompleted'>) => {
    const { runId, monitorId, keyId, trigger } = e.data;
    const followed = runs.get(runId);
    runs.delete(runId);
    if (trigger === 'backfill') return;
    let monitor = queries.monitors.byId(monitorId);
    if (!monitor) {
      // created just before: its settings are read once the read models hold the completion
      await deps.projected(e.globalPosition);
      monitor = queries.monitors.byId(monitorId);
    }
    const alerts = monitor?.alerts;
    if (!alerts) return;
    const complete = followed && followed.checks.length === e.data.checked + e.data.failed;
    const run = complete ? followed : await readRun(runId);
    if (!run) return;
    // previous searches not seen: looked up in the history, at once, once it holds every check up to this completion
    const unseen = run.checks.filter((c) => c.check.ok && c.before === 'unknown');
    if (unseen.length > 0) await deps.projected(e.globalPosition);
    const found = queries.ranks.lastSuccesses(
      monitorId,
      unseen.map(({ check }) => ({ keyword: check.keyword, atMs: Date.parse(check.checkedAt) })),
      runId,
    );
    const looked = new Map(unseen.map((c, i) => [c, found[i]]));
    const comparisons: KeywordComparison[] = [];
    const failures: RunFailure[] = [];
    for (const c of run.checks) {
      const { check, before } = c;
      if (!check.ok) {
        failures.push({ keyword: check.keyword, failure: check.failure ?? 'failed', at: check.checkedAt });
        continue;
      }
      const previous = before === 'unknown' ? looked.get(c) : before;
      comparisons.push({
        keyword: check.keyword,
        at: check.checkedAt,
        after: stateOfRanks(check.ranks),
        ...(previous ? { before: previous } : {}),
      });
    }
    const raised = alertsOfRun(runId, alerts, run.domains, comparisons, failures);
    if (raised.length === 0) return;
    await deps.handle(streams.monitorAlerts(runId), alertDecider, {
      type: 'RaiseAlerts',
      runId,
      monitorId,
      keyId,
      alerts: raised,
      now: (deps.now?.() ?? new Date()).toISOString(),
    });
  };

  return createReactor(
    {
      name: 'monitor-alerter',
      handles: ['MonitorRunStarted', 'MonitorKeywordChecked', 'MonitorRunCompleted'],
      async handle(events) {
        for (const e of events) {
          if (e.type === 'MonitorRunStarted') {
            if (e.data.trigger === 'backfill') continue;
            if (runs.size >= MAX_RUNS) runs.delete(runs.keys().next().value as string);
            runs.set(e.data.runId, { domains: e.data.domains, checks: [] });
          } else if (e.type === 'MonitorKeywordChecked') {
            runs.get(e.data.runId)?.checks.push({ check: e.data, before: e.data.ok ? beforeOf(e.data) : undefined });
            remember(e.data);
          } else {
            await raise(e);
          }
        }
      },
    },
    reactorDeps(deps),
  );
};

const stateOfPoints = (points: HistoryPoint[]) =>
  new Map<string, DomainState>(
    points.map((p) => [
      p.domain,
      {
        position: p.position ?? 0,
        url: p.url,
        features: p.features,
        ...(p.above_the_fold === undefined ? {} : { aboveTheFold: p.above_the_fold }),
      },
    ]),
  );

/** the alerter as it was: each completed run waits for the read models, then reads every keyword's whole history */
const createHistoryAlerter = (deps: Parameters<typeof createAlerter>[0]) => {
  const { queries, versions } = deps;
  if (!versions) throw new Error('the history alerter reads each run’s keywords: give it the monitor versions');
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
      needsProjection: true,
      async handle(events) {
        for (const e of events) await raise(e);
      },
    },
    reactorDeps(deps),
  );
};
