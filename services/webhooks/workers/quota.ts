import type { EventStore } from '../../ports/eventStore.js';
import type { Handled } from '../../reactor/reactor.js';

export const QUOTA_LOW_SHARE = 0.8;

export type UsageEvent = Handled<'QuotaReserved' | 'QuotaReleased'>;

/** a key's count of the month just before and just after one usage event */
export interface Crossing {
  before: number;
  after: number;
}

/**
 * A key's count of the month as its usage stream's events pass by (docs/webhooks.md), for the quota messages: each
 * fires when a reservation crosses its line (80 %, 100 %), once per key and month (its `webhook-id` is derived from
 * both, so a month that dips under the line and crosses it again sends the same message). The count is folded in the
 * log's order; a stream first seen mid-way, or one whose events went by while no endpoint of its key took a quota
 * message (a gap in its versions), is read up to there once. A key none of whose endpoints takes one is not followed
 * at all (its key is not even read: ~5 % of the pipeline thread's time, for the many keys with no endpoint).
 * `crossing` is asked once per quota event type for the same event: the second ask is answered from the first.
 */
export const createQuotaTracker = (eventStore: EventStore) => {
  const used = new Map<string, { used: number; version: number }>();
  let last: { eventId: string; crossing: Crossing | undefined } | undefined;

  const stateOf = async (e: UsageEvent) => {
    const known = used.get(e.streamName);
    if (known && known.version >= e.streamVersion - 1) return known;
    let count = 0;
    if (e.streamVersion > 0) {
      const { events } = await eventStore.readStream(e.streamName, { maxCount: e.streamVersion });
      for (const x of events) count += x.type === 'QuotaReserved' ? 1 : x.type === 'QuotaReleased' ? -1 : 0;
    }
    if (used.size >= 10_000) used.clear();
    const state = { used: count, version: e.streamVersion - 1 };
    used.set(e.streamName, state);
    return state;
  };

  const advance = async (e: UsageEvent): Promise<Crossing | undefined> => {
    const state = await stateOf(e);
    if (e.streamVersion <= state.version) return undefined;
    const before = state.used;
    state.used += e.type === 'QuotaReserved' ? 1 : -1;
    state.version = e.streamVersion;
    return { before, after: state.used };
  };

  return {
    /** the count before and after `e`, when `followed` (an endpoint of its key takes the asking type); else nothing */
    async crossing(e: UsageEvent, followed: boolean): Promise<Crossing | undefined> {
      if (!followed) return undefined;
      if (last?.eventId === e.eventId) return last.crossing;
      const crossing = await advance(e);
      last = { eventId: e.eventId, crossing };
      return crossing;
    },
  };
};
export type QuotaTracker = ReturnType<typeof createQuotaTracker>;

/** the first of the month after `month` (YYYYMM): when the quota renews */
export const firstOfNextMonth = (month: string) => {
  const y = Number(month.slice(0, 4));
  const m = Number(month.slice(4, 6));
  return new Date(Date.UTC(y, m, 1)).toISOString();
};
