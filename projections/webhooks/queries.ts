import { replayOfDelivery } from '../../contracts/events.js';
import { replayedDeliveryIdOf } from '../../domain/webhook/ids.js';
import type { DocReader } from '../projection.js';
import {
  type OpenReplayDoc,
  type ReplayDoc,
  webhookOpenReplaysProjection,
  webhookReplaysProjection,
} from './replays.js';
import {
  type DeliveryDoc,
  type OutboxBodyDoc,
  type OutboxDoc,
  replayedDeliveryDoc,
  type WebhookDoc,
  webhookDeliveriesProjection,
  webhookOutboxBodiesProjection,
  webhookOutboxProjection,
  webhooksProjection,
} from './webhooks.js';

const byId = (a: { deliveryId: string }, b: { deliveryId: string }) =>
  a.deliveryId < b.deliveryId ? -1 : a.deliveryId > b.deliveryId ? 1 : 0;

export const webhookQueries = (docs: DocReader) => {
  /** a replay's selection never changes once recorded: the last ones read are kept (each is up to ~70 kB) */
  const kept = new Map<string, ReplayDoc>();
  const replay = (replayId: string) => {
    const hit = kept.get(replayId);
    if (hit) return hit;
    const doc = docs.get<ReplayDoc>(webhookReplaysProjection.name, replayId);
    if (doc) {
      if (kept.size >= 32) kept.delete(kept.keys().next().value as string);
      kept.set(replayId, doc);
    }
    return doc;
  };

  /**
   * Per open replay, its deliveries seen claimed: a claimed delivery has its document from then on, so each is looked
   * up until it is found once, not at every read of the outbox (a replay of 1,000 was 1,000 lookups a read, for as
   * long as it stayed open). Replays no longer open are dropped at the next read.
   */
  const claimed = new Map<string, Uint8Array>();
  const isClaimed = (r: ReplayDoc, i: number) => {
    let seen = claimed.get(r.replayId);
    if (!seen) {
      seen = new Uint8Array(r.messages.length);
      claimed.set(r.replayId, seen);
    }
    if (seen[i] === 1) return true;
    if (!docs.has(webhookDeliveriesProjection.name, replayedDeliveryIdOf(r.replayId, i))) return false;
    seen[i] = 1;
    return true;
  };
  const forgetClosed = (open: OpenReplayDoc[]) => {
    if (claimed.size <= open.length) return;
    const still = new Set(open.map((o) => o.replayId));
    for (const id of claimed.keys()) if (!still.has(id)) claimed.delete(id);
  };

  /**
   * The deliveries of these replays not claimed yet, as their replay's entries stand for them
   * (docs/webhooks.md#replay-recorded-by-reference): a replayed delivery has a document of its own from its first
   * claim on. At most `perKey` of each key's (all without it).
   */
  const unclaimed = (open: OpenReplayDoc[], perKey = Number.POSITIVE_INFINITY): DeliveryDoc[] => {
    forgetClosed(open);
    const out: DeliveryDoc[] = [];
    const taken = new Map<string, number>();
    for (const o of open) {
      const r = replay(o.replayId);
      if (!r) continue;
      let n = taken.get(r.keyId) ?? 0;
      for (let i = 0; i < r.messages.length && n < perKey; i++) {
        if (isClaimed(r, i)) continue;
        const [, messageId, eventType] = r.messages[i]!;
        out.push(replayedDeliveryDoc(replayedDeliveryIdOf(r.replayId, i), { ...r, messageId, eventType }));
        n += 1;
      }
      taken.set(r.keyId, n);
    }
    return out;
  };
  const openOf = (webhookId: string) => docs.listByLookup<OpenReplayDoc>(webhookOpenReplaysProjection.name, webhookId);

  return {
    byId: (webhookId: string) => docs.get<WebhookDoc>(webhooksProjection.name, webhookId),
    /** the key's endpoints, by id */
    ofKey: (keyId: string) => docs.listByLookup<WebhookDoc>(webhooksProjection.name, keyId),
    delivery: (deliveryId: string): DeliveryDoc | undefined => {
      const doc = docs.get<DeliveryDoc>(webhookDeliveriesProjection.name, deliveryId);
      const named = doc ? undefined : replayOfDelivery(deliveryId);
      if (!named || !docs.has(webhookOpenReplaysProjection.name, named.replayId)) return doc;
      const r = replay(named.replayId);
      const entry = r?.messages[named.index];
      return r && entry
        ? replayedDeliveryDoc(deliveryId, { ...r, messageId: entry[1], eventType: entry[2] })
        : undefined;
    },
    /** an endpoint's deliveries, oldest first (ids are time-ordered) */
    deliveriesOf: (webhookId: string) =>
      [
        ...docs.listByLookup<DeliveryDoc>(webhookDeliveriesProjection.name, webhookId),
        ...unclaimed(openOf(webhookId)),
      ].sort(byId),
    /**
     * The newest `last` deliveries of an endpoint with the status (when given) and scheduled at or after `since` (an ISO
     * instant), oldest first: filtered and paged by the store, so `?limit=1` reads one document whatever the endpoint
     * holds; the endpoint's replayed deliveries not claimed yet (each pending) join the page from their replays.
     */
    deliveriesPage: (webhookId: string, filter: { status?: string; since?: string; last: number }) => {
      const stored = docs.listByLookup<DeliveryDoc>(webhookDeliveriesProjection.name, webhookId, {
        last: filter.last,
        equal: filter.status ? { status: filter.status } : {},
        atLeast: filter.since ? { scheduledAt: filter.since } : {},
      });
      if (filter.status !== undefined && filter.status !== 'pending') return stored;
      const open = openOf(webhookId);
      if (open.length === 0) return stored;
      const since = filter.since;
      const waiting = unclaimed(open).filter((d) => since === undefined || d.scheduledAt >= since);
      return [...stored, ...waiting].sort(byId).slice(-filter.last);
    },
    /**
     * every delivery waiting for an attempt: the outbox's, and the replayed ones not claimed yet (with
     * `replayedPerKey`, at most that many of a key's: the deliverer holds no more of a key at once)
     */
    outbox: (options: { replayedPerKey?: number } = {}): OutboxDoc[] => {
      const stored = docs.listByLookup<OutboxDoc>(webhookOutboxProjection.name, 'pending');
      const open = docs.list<OpenReplayDoc>(webhookOpenReplaysProjection.name);
      if (open.length === 0) return stored;
      const known = new Set(stored.map((d) => d.deliveryId));
      const keyOf = new Map(open.map((o) => [o.replayId, replay(o.replayId)?.keyId]));
      for (const d of unclaimed(open, options.replayedPerKey)) {
        if (known.has(d.deliveryId)) continue;
        const keyId = keyOf.get(d.replayId ?? '');
        stored.push({
          deliveryId: d.deliveryId,
          webhookId: d.webhookId,
          ...(keyId ? { keyId } : {}),
          eventType: d.eventType,
          scheduledAt: d.scheduledAt,
          due: Date.parse(d.scheduledAt),
        });
      }
      return stored;
    },
    /**
     * How many deliveries wait for an attempt and when the oldest was scheduled (ms; none: undefined), as `outbox()`
     * would count them, without making a document for each replayed one not claimed yet (the metrics' gauges)
     */
    outboxStats: (): { depth: number; oldest?: number } => {
      let depth = 0;
      let oldest = Number.POSITIVE_INFINITY;
      for (const d of docs.listByLookup<OutboxDoc>(webhookOutboxProjection.name, 'pending')) {
        depth += 1;
        oldest = Math.min(oldest, Date.parse(d.scheduledAt));
      }
      for (const o of docs.list<OpenReplayDoc>(webhookOpenReplaysProjection.name)) {
        // a replay's deliveries each take a document at their first claim (`opened` counts them)
        const waiting = o.selected - o.opened;
        const r = waiting > 0 ? replay(o.replayId) : undefined;
        if (!r) continue;
        depth += waiting;
        oldest = Math.min(oldest, Date.parse(r.scheduledAt));
      }
      return Number.isFinite(oldest) ? { depth, oldest } : { depth };
    },
    /** what a waiting delivery sends: its `webhook-id` and body (a replayed delivery's is rebuilt from the log) */
    outboxBody: (deliveryId: string) => docs.get<OutboxBodyDoc>(webhookOutboxBodiesProjection.name, deliveryId),
    /** a replay as recorded: its endpoint and its entries (a replayed delivery's body is rebuilt from its entry) */
    replay,
  };
};
export type WebhookQueries = ReturnType<typeof webhookQueries>;
