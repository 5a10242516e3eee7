import { replayOfDelivery } from '../../contracts/events.js';
import type { WebhookEventType } from '../../contracts/webhookEvents.js';
import type { Projection } from '../projection.js';

/**
 * A replay as recorded (docs/webhooks.md#replay-recorded-by-reference): the endpoint and the messages it selected, one
 * short entry each (the log position of the event the message is made from, its `webhook-id`, its type). Written
 * once and never changed: an attempt of a replayed delivery reads its entry here to rebuild the body.
 */
export interface ReplayDoc {
  replayId: string;
  webhookId: string;
  keyId: string;
  scheduledAt: string;
  baseUrl: string;
  messages: Array<[number, string, WebhookEventType]>;
}

export const webhookReplaysProjection: Projection<ReplayDoc> = {
  name: 'webhookReplays',
  idOf: (e) => (e.type === 'WebhookReplayScheduled' ? e.data.replayId : undefined),
  evolve(doc, e) {
    if (e.type !== 'WebhookReplayScheduled') return doc ?? null;
    const { replayId, webhookId, keyId, scheduledAt, baseUrl, messages } = e.data;
    return { replayId, webhookId, keyId, scheduledAt, baseUrl, messages };
  },
};

/**
 * A replay with deliveries not claimed yet, found by its endpoint: until its first claim (which says what it is) a
 * replayed delivery has no document of its own, and its replay's entry stands for it in the delivery list and the
 * outbox (projections/webhooks/queries.ts). Gone once every delivery of the replay has been claimed.
 */
export interface OpenReplayDoc {
  replayId: string;
  webhookId: string;
  selected: number;
  opened: number;
}

export const webhookOpenReplaysProjection: Projection<OpenReplayDoc> = {
  name: 'webhookOpenReplays',
  lookupOf: (doc) => doc.webhookId,
  idOf: (e) =>
    e.type === 'WebhookReplayScheduled'
      ? e.data.replayId
      : e.type === 'WebhookAttemptClaimed'
        ? e.data.opened && replayOfDelivery(e.data.deliveryId)?.replayId
        : undefined,
  evolve(doc, e) {
    if (e.type === 'WebhookReplayScheduled') {
      const { replayId, webhookId, messages } = e.data;
      return messages.length > 0 ? { replayId, webhookId, selected: messages.length, opened: 0 } : null;
    }
    if (e.type === 'WebhookAttemptClaimed' && doc) {
      // one claim a delivery carries `opened` (its first): the count reaches `selected` once each was claimed
      return doc.opened + 1 >= doc.selected ? null : { ...doc, opened: doc.opened + 1 };
    }
    return doc ?? null;
  },
};
