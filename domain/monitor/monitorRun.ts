import { Map as PMap, Set as PSet } from 'immutable';
import {
  type DomainRank,
  type EventOf,
  type MonitorDefinition,
  MonitorRunStarted,
  RunTargeting,
} from '../../contracts/events.js';
import type { Decider } from '../kernel/decider.js';
import { DomainError, errorCodes } from '../kernel/errors.js';
import { monitorJobId } from './ids.js';

export type MonitorRunEvent =
  | EventOf<'MonitorRunStarted'>
  | EventOf<'MonitorKeywordChecked'>
  | EventOf<'MonitorKeywordsSkipped'>
  | EventOf<'MonitorRunCompleted'>;

export type RunStartedData = EventOf<'MonitorRunStarted'>['data'];

/** A monitor's keywords as of one version of its stream: what a run references. */
export interface MonitorAt {
  version: number;
  keywords: string[];
}

/**
 * The one place a run's record is built (scheduled, manual and backfill runs alike): the monitor's targeting copied
 * (small), its keywords referenced by the monitor's version and counted. A backfill run names stored jobs, whose
 * keywords it records (once per monitor).
 */
export const runRecord = (
  monitor: Pick<MonitorDefinition, 'monitorId' | 'keyId'> & RunTargeting,
  keywords: MonitorAt | { backfill: string[]; sources: string[] },
  run: Pick<RunStartedData, 'runId' | 'trigger' | 'slot' | 'noCache' | 'startAt' | 'intervalMs' | 'startedAt'>,
): RunStartedData => ({
  runId: run.runId,
  monitorId: monitor.monitorId,
  keyId: monitor.keyId,
  trigger: run.trigger,
  ...(run.slot ? { slot: run.slot } : {}),
  ...('backfill' in keywords ? { keywords: keywords.backfill } : {}),
  ...RunTargeting.parse(monitor),
  noCache: run.noCache,
  startAt: run.startAt,
  intervalMs: run.intervalMs,
  ...('backfill' in keywords ? { sources: keywords.sources } : {}),
  startedAt: run.startedAt,
  ...('backfill' in keywords ? {} : { monitorVersion: keywords.version, keywordCount: keywords.keywords.length }),
});

/** how many searches the run makes */
export const keywordCountOf = (run: RunStartedData) => run.keywords?.length ?? run.keywordCount ?? 0;

/**
 * The jobs a run searches, in order: the i-th keyword's job is submitted at `startAt + i × intervalMs` (a backfill
 * run's are the stored jobs it names). `keywords` are the run's own (older runs, backfills) or its monitor's at its
 * version.
 */
export const plannedJobs = (run: RunStartedData, keywords: readonly string[] = run.keywords ?? []) => {
  const start = Date.parse(run.startAt);
  return keywords.map((keyword, i) => {
    const submitAt = start + i * run.intervalMs;
    return { keyword, jobId: run.sources?.[i] ?? monitorJobId(run.runId, keyword, submitAt), submitAt };
  });
};

/**
 * Where a job sits in its run's plan, from the job id alone: its first 12 hex digits are its submit time, and the
 * i-th job is submitted at `startAt + i × intervalMs` (a whole number of ms, at least 1: the key's rate). Undefined
 * when the id does not tell (no interval).
 */
export const planIndexOf = (run: RunStartedData, jobId: string): number | undefined => {
  if (!(run.intervalMs >= 1)) return undefined;
  const at = Number.parseInt(jobId.slice(0, 12), 16);
  if (!Number.isFinite(at)) return undefined;
  const i = Math.round((at - Date.parse(run.startAt)) / run.intervalMs);
  return i >= 0 ? i : undefined;
};

interface Open {
  status: 'open' | 'completed';
  run: RunStartedData;
  total: number;
  /** keyword → its job, for runs that recorded their keywords (not backfills, whose keywords may repeat) */
  jobOf: PMap<string, string>;
  /** job → its place in the plan, for runs that recorded their keywords */
  jobIndex: PMap<string, number>;
  /** jobs checked, and jobs skipped by name (runs recorded before skips were counted) */
  done: PSet<string>;
  /** the plan from this index on is skipped (counted skips) */
  skippedFrom: number;
  checked: number;
  failed: number;
  skipped: number;
  skipReason?: string;
}
export type MonitorRunState = { status: 'none' } | Open;

export type MonitorRunCommand =
  | { type: 'StartRun'; run: RunStartedData; skipAll?: string }
  | {
      type: 'RecordCheck';
      runId: string;
      keyword: string;
      jobId: string;
      checkedAt: string;
      ok: boolean;
      failure?: string;
      ranks: DomainRank[];
      now: string;
    }
  /** the run's searches from `fromIndex` on that are not checked yet will not be made */
  | { type: 'SkipRest'; runId: string; fromIndex: number; reason: string; now: string };

const completion = (s: Open, now: string): MonitorRunEvent[] =>
  s.checked + s.failed + s.skipped < s.total
    ? []
    : [
        {
          type: 'MonitorRunCompleted',
          data: {
            runId: s.run.runId,
            monitorId: s.run.monitorId,
            keyId: s.run.keyId,
            trigger: s.run.trigger,
            checked: s.checked,
            failed: s.failed,
            skipped: s.skipped,
            ...(s.skipReason ? { skipReason: s.skipReason } : {}),
            completedAt: now,
          },
        },
      ];

const indexOf = (s: Open, jobId: string) => s.jobIndex.get(jobId) ?? planIndexOf(s.run, jobId);

/** whether a job of the plan is already checked, or skipped */
const settled = (s: Open, jobId: string) => {
  if (s.done.has(jobId)) return true;
  const i = indexOf(s, jobId);
  return i !== undefined && i >= s.skippedFrom;
};

/** how many of the plan's searches in [from, to) are not checked: what a skip from `from` counts */
const unchecked = (s: Open, from: number, to: number) => {
  let checkedInRange = 0;
  for (const job of s.done) {
    const i = indexOf(s, job);
    if (i !== undefined && i >= from && i < to) checkedInRange++;
  }
  return Math.max(0, to - from - checkedInRange);
};

/**
 * One run of a monitor (docs/rank-tracking.md): started once per id (a scheduled run's id is derived from its slot,
 * so two dispatchers start it once), each job checked once (a redelivered result or a second dispatcher decides
 * nothing), the rest of its searches skipped with a reason and a count, and completed when every search is checked
 * or skipped. Its events are the same size whatever its keywords: the start references the monitor's version, a skip
 * counts.
 */
export const monitorRunDecider: Decider<MonitorRunState, MonitorRunCommand, MonitorRunEvent> = {
  initialState: () => ({ status: 'none' }),
  decide(command, state) {
    if (command.type === 'StartRun') {
      if (state.status !== 'none') return [];
      // in the schema's member order: the live projection stores this object as it is, a rebuild stores the parsed
      // event, and the two must write the same bytes (docs/design.md)
      const started: MonitorRunEvent = {
        type: 'MonitorRunStarted',
        data: MonitorRunStarted.shape.data.parse(command.run),
      };
      const s = monitorRunDecider.evolve(state, started) as Open;
      // nothing to search (a backfill that found no stored search): started and completed at once
      if (s.total === 0) return [started, ...completion(s, command.run.startedAt)];
      if (!command.skipAll) return [started];
      const skipped = skipEvent(s, 0, command.skipAll, command.run.startedAt);
      return [started, skipped, ...completion(monitorRunDecider.evolve(s, skipped) as Open, command.run.startedAt)];
    }
    if (state.status === 'none') throw new DomainError(errorCodes.runNotFound, `run ${command.runId} not found`);
    if (state.status === 'completed') return [];
    if (command.type === 'RecordCheck') {
      if (settled(state, command.jobId)) return [];
      const { type: _t, now, failure, ...rest } = command;
      const checked: MonitorRunEvent = {
        type: 'MonitorKeywordChecked',
        data: {
          ...rest,
          monitorId: state.run.monitorId,
          ...(failure ? { failure } : {}),
          ranks: command.ok ? command.ranks : state.run.domains.map((domain) => ({ domain, features: [] })),
          recordedAt: now,
        },
      };
      return [checked, ...completion(monitorRunDecider.evolve(state, checked) as Open, now)];
    }
    if (command.fromIndex >= Math.min(state.skippedFrom, state.total)) return [];
    const skipped = skipEvent(state, command.fromIndex, command.reason, command.now);
    if (skipped.data.count === 0) return [];
    return [skipped, ...completion(monitorRunDecider.evolve(state, skipped) as Open, command.now)];
  },
  evolve(state, event) {
    switch (event.type) {
      case 'MonitorRunStarted': {
        const run = event.data;
        const jobs = plannedJobs(run);
        const jobOf = run.sources ? PMap<string, string>() : PMap(jobs.map((j) => [j.keyword, j.jobId]));
        return {
          status: 'open',
          run,
          total: keywordCountOf(run),
          jobOf,
          jobIndex: PMap(jobs.map((j, i) => [j.jobId, i])),
          done: PSet(),
          skippedFrom: Number.POSITIVE_INFINITY,
          checked: 0,
          failed: 0,
          skipped: 0,
        };
      }
      case 'MonitorKeywordChecked':
        if (state.status === 'none') return state;
        return {
          ...state,
          done: state.done.add(event.data.jobId),
          checked: state.checked + (event.data.ok ? 1 : 0),
          failed: state.failed + (event.data.ok ? 0 : 1),
        };
      case 'MonitorKeywordsSkipped': {
        if (state.status === 'none') return state;
        const reason = state.skipReason ?? event.data.reason;
        if (event.data.count !== undefined) {
          return {
            ...state,
            skippedFrom: Math.min(state.skippedFrom, event.data.fromIndex ?? 0),
            skipped: state.skipped + event.data.count,
            skipReason: reason,
          };
        }
        // recorded before skips were counted: the keywords by name
        const jobs = (event.data.keywords ?? [])
          .map((k) => state.jobOf.get(k))
          .filter((j): j is string => j !== undefined);
        return { ...state, done: state.done.union(jobs), skipped: state.skipped + jobs.length, skipReason: reason };
      }
      case 'MonitorRunCompleted':
        return state.status === 'none' ? state : { ...state, status: 'completed' };
    }
  },
};

/** a counted skip of the plan from `fromIndex` (up to where an earlier skip began) */
const skipEvent = (s: Open, fromIndex: number, reason: string, now: string): EventOf<'MonitorKeywordsSkipped'> => ({
  type: 'MonitorKeywordsSkipped',
  data: {
    runId: s.run.runId,
    monitorId: s.run.monitorId,
    reason,
    skippedAt: now,
    count: unchecked(s, fromIndex, Math.min(s.skippedFrom, s.total)),
    fromIndex,
  },
});
