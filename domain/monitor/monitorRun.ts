import { Map as PMap, Set as PSet } from 'immutable';
import type { DomainRank, EventOf } from '../../contracts/events.js';
import type { Decider } from '../kernel/decider.js';
import { DomainError, errorCodes } from '../kernel/errors.js';
import { monitorJobId } from './ids.js';

export type MonitorRunEvent =
  | EventOf<'MonitorRunStarted'>
  | EventOf<'MonitorKeywordChecked'>
  | EventOf<'MonitorKeywordsSkipped'>
  | EventOf<'MonitorRunCompleted'>;

export type RunStartedData = EventOf<'MonitorRunStarted'>['data'];

/**
 * The jobs a run searches, in order: the i-th keyword's job is submitted at `startAt + i × intervalMs` (a backfill
 * run's are the stored jobs it names).
 */
export const plannedJobs = (run: RunStartedData) => {
  const start = Date.parse(run.startAt);
  return run.keywords.map((keyword, i) => {
    const submitAt = start + i * run.intervalMs;
    return { keyword, jobId: run.sources?.[i] ?? monitorJobId(run.runId, keyword, submitAt), submitAt };
  });
};

interface Open {
  status: 'open' | 'completed';
  run: RunStartedData;
  /** keyword → its job (not for backfill runs, whose keywords may repeat) */
  jobOf: PMap<string, string>;
  /** jobs checked or skipped */
  done: PSet<string>;
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
  | { type: 'SkipKeywords'; runId: string; keywords: string[]; reason: string; now: string };

const completion = (s: Open, now: string): MonitorRunEvent[] =>
  s.done.size < s.run.keywords.length
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

/**
 * One run of a monitor (docs/rank-tracking.md): started once per id (a scheduled run's id is derived from its slot,
 * so two dispatchers start it once), each job checked once (a redelivered result or a second dispatcher decides
 * nothing), keywords skipped with a reason, and completed when every job is checked or skipped.
 */
export const monitorRunDecider: Decider<MonitorRunState, MonitorRunCommand, MonitorRunEvent> = {
  initialState: () => ({ status: 'none' }),
  decide(command, state) {
    if (command.type === 'StartRun') {
      if (state.status !== 'none') return [];
      const started: MonitorRunEvent = { type: 'MonitorRunStarted', data: command.run };
      const s = monitorRunDecider.evolve(state, started) as Open;
      // nothing to search (a backfill that found no stored search): started and completed at once
      if (command.run.keywords.length === 0) return [started, ...completion(s, command.run.startedAt)];
      if (!command.skipAll) return [started];
      const skipped: MonitorRunEvent = {
        type: 'MonitorKeywordsSkipped',
        data: {
          runId: command.run.runId,
          monitorId: command.run.monitorId,
          keywords: command.run.keywords,
          reason: command.skipAll,
          skippedAt: command.run.startedAt,
        },
      };
      return [started, skipped, ...completion(monitorRunDecider.evolve(s, skipped) as Open, command.run.startedAt)];
    }
    if (state.status === 'none') throw new DomainError(errorCodes.runNotFound, `run ${command.runId} not found`);
    if (state.status === 'completed') return [];
    if (command.type === 'RecordCheck') {
      if (state.done.has(command.jobId)) return [];
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
    const open = command.keywords.filter((k) => {
      const job = state.jobOf.get(k);
      return job !== undefined && !state.done.has(job);
    });
    if (open.length === 0) return [];
    const skipped: MonitorRunEvent = {
      type: 'MonitorKeywordsSkipped',
      data: {
        runId: command.runId,
        monitorId: state.run.monitorId,
        keywords: open,
        reason: command.reason,
        skippedAt: command.now,
      },
    };
    return [skipped, ...completion(monitorRunDecider.evolve(state, skipped) as Open, command.now)];
  },
  evolve(state, event) {
    switch (event.type) {
      case 'MonitorRunStarted': {
        const jobs = plannedJobs(event.data);
        const jobOf = event.data.sources ? PMap<string, string>() : PMap(jobs.map((j) => [j.keyword, j.jobId]));
        return { status: 'open', run: event.data, jobOf, done: PSet(), checked: 0, failed: 0, skipped: 0 };
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
        const jobs = event.data.keywords.map((k) => state.jobOf.get(k)).filter((j): j is string => j !== undefined);
        return {
          ...state,
          done: state.done.union(jobs),
          skipped: state.skipped + jobs.length,
          skipReason: state.skipReason ?? event.data.reason,
        };
      }
      case 'MonitorRunCompleted':
        return state.status === 'none' ? state : { ...state, status: 'completed' };
    }
  },
};
