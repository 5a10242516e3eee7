import { List, Map as PMap } from 'immutable';
import type { EventOf, KeyLimitKind } from '../../contracts/events.js';
import type { Decider } from '../kernel/decider.js';
import { DomainError, errorCodes } from '../kernel/errors.js';

export type KeyLimitEvent = EventOf<'KeyLimitTaken'> | EventOf<'KeyLimitFreed'>;

/** A take not followed by its creation within this long is abandoned (its process died between the two appends). */
export const ABANDONED_AFTER_MS = 60_000;
/** Replays are counted over the last hour. */
export const REPLAY_WINDOW_MS = 3_600_000;

interface Counted {
  /** held ids and when each was taken */
  held: PMap<string, string>;
  /** what the key had before its stream recorded any, less those freed since */
  baseline: number;
}

export interface KeyLimitsState {
  /** webhook and monitor counts, once the stream has recorded one of the kind */
  counted: PMap<'webhook' | 'monitor', Counted>;
  /** monitor → its manual run in progress */
  manual: PMap<string, string>;
  /** when the key's latest replays were requested (at most the last 1,000) */
  replays: List<string>;
}

type Countable = 'webhook' | 'monitor';

export type KeyLimitsCommand =
  | {
      type: 'Take';
      keyId: string;
      kind: Countable;
      id: string;
      limit: number;
      /** how many the read model counts now: the baseline, should the stream not have counted this kind yet */
      current: number;
      /** whether a held id exists (in the read model): an id taken long ago that does not is abandoned */
      exists(id: string): boolean;
      /** the refusal's detail, given the count */
      refusal(count: number): string;
      now: string;
    }
  | { type: 'Free'; keyId: string; kind: Countable; id: string; reason: string; now: string }
  | {
      type: 'StartManualRun';
      keyId: string;
      monitorId: string;
      runId: string;
      /** whether a run has completed (the read model): the one held is given back then */
      completed(runId: string): boolean;
      now: string;
    }
  | { type: 'RequestReplay'; keyId: string; replayId: string; perHour: number; now: string };

const taken = (
  keyId: string,
  kind: KeyLimitKind,
  id: string,
  now: string,
  extra: { scope?: string; baseline?: number } = {},
): KeyLimitEvent => ({ type: 'KeyLimitTaken', data: { keyId, kind, id, ...extra, takenAt: now } });
const freed = (keyId: string, kind: KeyLimitKind, id: string, reason: string, now: string): KeyLimitEvent => ({
  type: 'KeyLimitFreed',
  data: { keyId, kind, id, reason, freedAt: now },
});

/**
 * A key's limits on one stream (docs/security.md#per-key): endpoints and monitors counted, one manual run in progress
 * per monitor, replays an hour. The command handler appends with the stream's expected version, so parallel creates
 * are decided one after the other and none passes the limit.
 */
export const keyLimitsDecider: Decider<KeyLimitsState, KeyLimitsCommand, KeyLimitEvent> = {
  initialState: () => ({ counted: PMap(), manual: PMap(), replays: List() }),
  decide(command, state) {
    const now = command.now;
    switch (command.type) {
      case 'Take': {
        const known = state.counted.get(command.kind);
        if (known?.held.has(command.id)) return [];
        const events: KeyLimitEvent[] = [];
        let count = known ? known.baseline + known.held.size : command.current;
        if (known && count >= command.limit) {
          const cutoff = Date.parse(now) - ABANDONED_AFTER_MS;
          for (const [id, at] of known.held) {
            if (Date.parse(at) < cutoff && !command.exists(id)) {
              events.push(freed(command.keyId, command.kind, id, 'abandoned', now));
              count -= 1;
            }
          }
        }
        if (count >= command.limit) throw new DomainError(limitCode(command.kind), command.refusal(count));
        events.push(taken(command.keyId, command.kind, command.id, now, known ? {} : { baseline: command.current }));
        return events;
      }
      case 'Free': {
        const known = state.counted.get(command.kind);
        if (!known) return [];
        if (!known.held.has(command.id) && known.baseline === 0) return [];
        return [freed(command.keyId, command.kind, command.id, command.reason, now)];
      }
      case 'StartManualRun': {
        const current = state.manual.get(command.monitorId);
        if (current === command.runId) return [];
        const events: KeyLimitEvent[] = [];
        if (current !== undefined) {
          if (!command.completed(current)) {
            throw new DomainError(
              errorCodes.runInProgress,
              `run ${current} of this monitor is in progress: one manual run at a time (its checks appear in GET /v1/monitors/${command.monitorId}/history as its searches end)`,
            );
          }
          events.push(freed(command.keyId, 'manualRun', current, 'completed', now));
        }
        events.push(taken(command.keyId, 'manualRun', command.runId, now, { scope: command.monitorId }));
        return events;
      }
      case 'RequestReplay': {
        const since = Date.parse(now) - REPLAY_WINDOW_MS;
        const recent = state.replays.filter((at) => Date.parse(at) > since);
        if (recent.size >= command.perHour) {
          const oldest = Date.parse(recent.first() as string);
          const waitS = Math.max(1, Math.ceil((oldest + REPLAY_WINDOW_MS - Date.parse(now)) / 1000));
          throw new DomainError(
            errorCodes.replayLimit,
            `a key may request ${command.perHour} replays an hour and this one has requested ${recent.size}: the next is possible in ${Math.ceil(waitS / 60)} min`,
            waitS,
          );
        }
        return [taken(command.keyId, 'replay', command.replayId, now)];
      }
    }
  },
  evolve(state, event) {
    if (event.type === 'KeyLimitTaken') {
      const d = event.data;
      if (d.kind === 'manualRun') return { ...state, manual: state.manual.set(d.scope ?? '', d.id) };
      if (d.kind === 'replay') {
        const replays = state.replays.push(event.data.takenAt);
        return { ...state, replays: replays.size > 1_000 ? replays.shift() : replays };
      }
      const known = state.counted.get(d.kind) ?? { held: PMap<string, string>(), baseline: d.baseline ?? 0 };
      return {
        ...state,
        counted: state.counted.set(d.kind, { ...known, held: known.held.set(d.id, event.data.takenAt) }),
      };
    }
    const d = event.data;
    if (d.kind === 'manualRun') {
      const monitor = state.manual.findKey((run) => run === d.id);
      return monitor === undefined ? state : { ...state, manual: state.manual.delete(monitor) };
    }
    if (d.kind === 'replay') return state;
    const known = state.counted.get(d.kind);
    if (!known) return state;
    const next = known.held.has(d.id)
      ? { ...known, held: known.held.delete(d.id) }
      : { ...known, baseline: Math.max(0, known.baseline - 1) };
    return { ...state, counted: state.counted.set(d.kind, next) };
  },
};

const limitCode = (kind: Countable) => (kind === 'webhook' ? errorCodes.webhookLimit : errorCodes.monitorLimit);
