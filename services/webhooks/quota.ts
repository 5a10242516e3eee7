import { messageIdOf } from '../../domain/webhook/ids.js';
import type { ReadModelQueries } from '../../projections/index.js';
import type { EventStore } from '../ports/eventStore.js';
import type { LogEvent } from '../reactor/reactor.js';
import type { Message } from './messages.js';

export const QUOTA_LOW_SHARE = 0.8;

const firstOfNextMonth = (month: string) => {
  const y = Number(month.slice(0, 4));
  const m = Number(month.slice(4, 6));
  return new Date(Date.UTC(y, m, 1)).toISOString();
};

/**
 * `quota.low` (80% used) and `quota.exhausted` (100%) from a key's usage stream (docs/webhooks.md): each fires when a
 * reservation crosses its line, once per key and month (its `webhook-id` is derived from both, so a month that dips
 * under the line and crosses it again sends the same message). The count per stream is folded as the events pass
 * by, in the log's order; a stream first seen mid-way is read up to there once. A key none of whose endpoints takes
 * either message is not followed at all (its key is not even read: ~5% of the pipeline thread's time, for the many keys
 * with no endpoint); should one start taking them, its stream is read up to there then, as for a stream first seen.
 */
export const createQuotaTracker = (eventStore: EventStore, queries: ReadModelQueries) => {
  const used = new Map<string, { used: number; version: number }>();
  const stateOf = async (e: LogEvent) => {
    const known = used.get(e.streamName);
    if (known) return known;
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

  /** `interested`: whether an endpoint of the key takes messages of that type */
  return async (e: LogEvent, interested: (keyId: string, type: Message['type']) => boolean): Promise<Message[]> => {
    if (e.type !== 'QuotaReserved' && e.type !== 'QuotaReleased') return [];
    const { keyId } = e.data as { keyId: string };
    if (!interested(keyId, 'quota.low') && !interested(keyId, 'quota.exhausted')) {
      used.delete(e.streamName);
      return [];
    }
    const state = await stateOf(e);
    if (e.streamVersion <= state.version) return [];
    const before = state.used;
    state.used += e.type === 'QuotaReserved' ? 1 : -1;
    state.version = e.streamVersion;
    if (e.type !== 'QuotaReserved') return [];
    const { month, reservedAt } = e.data as { month: string; reservedAt: string };
    const quota = queries.keys.byId(keyId)?.monthlyQuota ?? 0;
    if (quota <= 0) return [];
    const data = (after: number) => ({
      key_id: keyId,
      month: `${month.slice(0, 4)}-${month.slice(4, 6)}`,
      used: after,
      monthly_quota: quota,
      remaining: Math.max(0, quota - after),
      renews_at: firstOfNextMonth(month),
    });
    const out: Message[] = [];
    const low = Math.ceil(quota * QUOTA_LOW_SHARE);
    if (before < low && state.used >= low) {
      out.push({
        type: 'quota.low',
        keyId,
        messageId: messageIdOf('quota.low', keyId, month),
        occurredAt: reservedAt,
        data: data(state.used),
      });
    }
    if (before < quota && state.used >= quota) {
      out.push({
        type: 'quota.exhausted',
        keyId,
        messageId: messageIdOf('quota.exhausted', keyId, month),
        occurredAt: reservedAt,
        data: data(state.used),
      });
    }
    return out;
  };
};
