import { type DomainRank, type EventOf, streams } from '../../../contracts/events.js';
import {
  alertDecider,
  alertsOfRun,
  type DomainState,
  type KeywordComparison,
  type RunFailure,
} from '../../../domain/monitor/alerts.js';
import type { FollowerDeps } from '../../application/followerDeps.js';
import { createReactor, type Handled, reactorDeps } from '../../reactor/reactor.js';

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
/** records a completed run's alerts on its alert stream (once: a second worker's decides nothing); none: nothing */
export const raiseAlerts = async (
  deps: Pick<FollowerDeps, 'handle' | 'now'>,
  run: { runId: string; monitorId: string; keyId: string },
  alerts: ReturnType<typeof alertsOfRun>,
) => {
  if (alerts.length === 0) return;
  await deps.handle(streams.monitorAlerts(run.runId), alertDecider, {
    type: 'RaiseAlerts',
    ...run,
    alerts,
    now: (deps.now?.() ?? new Date()).toISOString(),
  });
};

export const createAlerter = (deps: FollowerDeps) => {
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
    await raiseAlerts(
      deps,
      { runId, monitorId, keyId },
      alertsOfRun(runId, alerts, run.domains, comparisons, failures),
    );
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
