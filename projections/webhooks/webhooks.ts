import { replayOfDelivery } from '../../contracts/events.js';
import type { WebhookEventType } from '../../contracts/webhookEvents.js';
import type { Projection } from '../projection.js';

/** An endpoint as the api and the delivery worker read it (docs/webhooks.md). Gone once deleted. */
export interface WebhookDoc {
  webhookId: string;
  keyId: string;
  url: string;
  events: WebhookEventType[];
  monitorIds?: string[];
  disabled: boolean;
  disabledReason?: string;
  secretSeed: string;
  /** the secret before the last rotation, valid until `previousValidUntil` */
  previousSeed?: string;
  previousValidUntil?: string;
  createdAt: string;
  updatedAt: string;
  /** where in the log it was created: events before it are not its to deliver (a replay aside) */
  createdPosition: number;
}

/** the only events the webhooks view projects: nothing else changes an endpoint (services/webhooks/workers/router.ts) */
export const webhookEvents: ReadonlySet<string> = new Set([
  'WebhookCreated',
  'WebhookChanged',
  'WebhookSecretRotated',
  'WebhookDeleted',
]);

export const webhooksProjection: Projection<WebhookDoc> = {
  name: 'webhooks',
  lookupOf: (doc) => doc.keyId,
  idOf: (e) => (webhookEvents.has(e.type) ? (e.data as { webhookId: string }).webhookId : undefined),
  evolve(doc, e) {
    switch (e.type) {
      case 'WebhookCreated': {
        const { createdAt, ...d } = e.data;
        return { ...d, disabled: false, createdAt, updatedAt: createdAt, createdPosition: e.globalPosition };
      }
      case 'WebhookChanged': {
        if (!doc) return null;
        const c = e.data;
        const { monitorIds: _m, disabledReason: _r, ...rest } = doc;
        const monitorIds = c.monitorIds === undefined ? doc.monitorIds : (c.monitorIds ?? undefined);
        const disabled = c.disabled ?? doc.disabled;
        const disabledReason = !disabled ? undefined : (c.disabledReason ?? doc.disabledReason);
        return {
          ...rest,
          url: c.url ?? doc.url,
          events: c.events ?? doc.events,
          ...(monitorIds ? { monitorIds } : {}),
          disabled,
          ...(disabledReason ? { disabledReason } : {}),
          updatedAt: c.changedAt,
        };
      }
      case 'WebhookSecretRotated':
        if (!doc) return null;
        return {
          ...doc,
          secretSeed: e.data.secretSeed,
          previousSeed: e.data.previousSeed,
          previousValidUntil: e.data.previousValidUntil,
          updatedAt: e.data.rotatedAt,
        };
      case 'WebhookDeleted':
        return null;
      default:
        return doc ?? null;
    }
  },
};

/** [attempt, at, status code (0: none), latency ms, error ('' : none)] */
export type StoredAttempt = [number, string, number, number, string];

/** One delivery as its key lists it: every attempt with its status code and latency. */
export interface DeliveryDoc {
  deliveryId: string;
  webhookId: string;
  messageId: string;
  eventType: WebhookEventType;
  status: 'pending' | 'delivered' | 'failed';
  scheduledAt: string;
  nextAttemptAt?: string;
  deliveredAt?: string;
  failureReason?: string;
  replayId?: string;
  attempts: StoredAttempt[];
}

const deliveryEvents = new Set([
  'WebhookDeliveryScheduled',
  'WebhookDeliveryAttempted',
  'WebhookDelivered',
  'WebhookDeliveryGivenUp',
  'WebhookDeliveryRetryRequested',
  'WebhookAttemptClaimed',
]);
const deliveryIdOf = (e: { type: string; data: unknown }) =>
  deliveryEvents.has(e.type) ? (e.data as { deliveryId: string }).deliveryId : undefined;

const attemptOf = (
  d: {
    attempt: number;
    statusCode?: number;
    error?: string;
    latencyMs?: number;
  },
  at: string,
): StoredAttempt => [d.attempt, at, d.statusCode ?? 0, Math.round(d.latencyMs ?? 0), d.error ?? ''];

/** a replayed delivery as its replay's entry stands for it, and as its first claim's `opened` makes its document */
export const replayedDeliveryDoc = (
  deliveryId: string,
  o: { webhookId: string; messageId: string; eventType: WebhookEventType; scheduledAt: string },
): DeliveryDoc => {
  const replayId = replayOfDelivery(deliveryId)?.replayId;
  return {
    deliveryId,
    webhookId: o.webhookId,
    messageId: o.messageId,
    eventType: o.eventType,
    status: 'pending',
    scheduledAt: o.scheduledAt,
    nextAttemptAt: o.scheduledAt,
    ...(replayId ? { replayId } : {}),
    attempts: [],
  };
};

export const webhookDeliveriesProjection: Projection<DeliveryDoc> = {
  name: 'webhookDeliveries',
  lookupOf: (doc) => doc.webhookId,
  // a claim changes nothing listed, but a replayed delivery's first claim (`opened`) makes its document
  idOf: (e) => (e.type === 'WebhookAttemptClaimed' ? (e.data.opened ? e.data.deliveryId : undefined) : deliveryIdOf(e)),
  evolve(doc, e) {
    switch (e.type) {
      case 'WebhookAttemptClaimed':
        return doc ?? (e.data.opened ? replayedDeliveryDoc(e.data.deliveryId, e.data.opened) : null);
      case 'WebhookDeliveryScheduled': {
        const d = e.data;
        return {
          deliveryId: d.deliveryId,
          webhookId: d.webhookId,
          messageId: d.messageId,
          eventType: d.eventType,
          status: 'pending',
          scheduledAt: d.scheduledAt,
          nextAttemptAt: d.scheduledAt,
          ...(d.replayId ? { replayId: d.replayId } : {}),
          attempts: [],
        };
      }
      case 'WebhookDeliveryAttempted':
        if (!doc) return null;
        return {
          ...doc,
          nextAttemptAt: e.data.nextAttemptAt,
          attempts: [...doc.attempts, attemptOf(e.data, e.data.attemptedAt)],
        };
      case 'WebhookDelivered': {
        if (!doc) return null;
        const { nextAttemptAt: _n, failureReason: _f, ...rest } = doc;
        return {
          ...rest,
          status: 'delivered',
          deliveredAt: e.data.deliveredAt,
          attempts: [...doc.attempts, attemptOf(e.data, e.data.deliveredAt)],
        };
      }
      case 'WebhookDeliveryGivenUp': {
        if (!doc) return null;
        const { nextAttemptAt: _n, ...rest } = doc;
        // a give-up without an attempt of its own (endpoint disabled or deleted) adds none
        const own = e.data.latencyMs !== undefined;
        return {
          ...rest,
          status: 'failed',
          failureReason: e.data.reason,
          attempts: own ? [...doc.attempts, attemptOf(e.data, e.data.givenUpAt)] : doc.attempts,
        };
      }
      case 'WebhookDeliveryRetryRequested': {
        if (!doc) return null;
        const { failureReason: _f, ...rest } = doc;
        return { ...rest, status: 'pending', nextAttemptAt: e.data.requestedAt };
      }
      default:
        return doc ?? null;
    }
  },
};

/**
 * The outbox: one small document per delivery waiting for an attempt, all found by the lookup `pending` (what the
 * delivery worker polls, and the metrics' depth and oldest age). Delivered and given-up deliveries leave it.
 */
export interface OutboxDoc {
  deliveryId: string;
  webhookId: string;
  /** whose it is (the deliverer's fair share is per key); absent only after a retry recorded before it was carried */
  keyId?: string;
  eventType: WebhookEventType;
  scheduledAt: string;
  /** ms: when the next attempt is due */
  due: number;
  /** ms: a claim's lease; until then no other worker takes the attempt */
  leaseUntil?: number;
  claimedAt?: number;
  worker?: string;
}

export const webhookOutboxProjection: Projection<OutboxDoc> = {
  name: 'webhookOutbox',
  lookupOf: () => 'pending',
  idOf: deliveryIdOf,
  evolve(doc, e) {
    switch (e.type) {
      case 'WebhookDeliveryScheduled': {
        const d = e.data;
        return {
          deliveryId: d.deliveryId,
          webhookId: d.webhookId,
          keyId: d.keyId,
          eventType: d.eventType,
          scheduledAt: d.scheduledAt,
          due: Date.parse(d.scheduledAt),
        };
      }
      case 'WebhookAttemptClaimed': {
        // a replayed delivery's first claim: its outbox document starts here (its replay's entry stood for it)
        const o = e.data.opened;
        const base: OutboxDoc | undefined =
          doc ??
          (o && {
            deliveryId: e.data.deliveryId,
            webhookId: o.webhookId,
            keyId: o.keyId,
            eventType: o.eventType,
            scheduledAt: o.scheduledAt,
            due: Date.parse(o.scheduledAt),
          });
        if (!base) return null;
        return {
          ...base,
          leaseUntil: Date.parse(e.data.leaseUntil),
          claimedAt: Date.parse(e.data.claimedAt),
          worker: e.data.worker,
        };
      }
      case 'WebhookDeliveryAttempted': {
        if (!doc) return null;
        const { leaseUntil: _l, claimedAt: _c, worker: _w, ...rest } = doc;
        return { ...rest, due: Date.parse(e.data.nextAttemptAt) };
      }
      case 'WebhookDelivered':
      case 'WebhookDeliveryGivenUp':
        return null;
      case 'WebhookDeliveryRetryRequested': {
        const t = Date.parse(e.data.requestedAt);
        if (!doc) {
          const { deliveryId, webhookId, keyId, eventType, requestedAt } = e.data;
          return { deliveryId, webhookId, ...(keyId ? { keyId } : {}), eventType, scheduledAt: requestedAt, due: t };
        }
        const { leaseUntil: _l, claimedAt: _c, worker: _w, ...rest } = doc;
        return { ...rest, due: t };
      }
      default:
        return doc ?? null;
    }
  },
};

/**
 * What the deliverer sends for each delivery waiting in the outbox: its `webhook-id` and exact body, one document per
 * delivery read by id at its attempt (the outbox's own documents stay small: the deliverer, the metrics and the
 * dashboard list them all). Gone once the delivery ends; a retry brings it back from its event.
 */
export interface OutboxBodyDoc {
  messageId: string;
  body: string;
}

export const webhookOutboxBodiesProjection: Projection<OutboxBodyDoc> = {
  name: 'webhookOutboxBodies',
  idOf: deliveryIdOf,
  evolve(doc, e) {
    switch (e.type) {
      case 'WebhookDeliveryScheduled':
        return { messageId: e.data.messageId, body: e.data.body };
      case 'WebhookDelivered':
      case 'WebhookDeliveryGivenUp':
        return null;
      case 'WebhookDeliveryRetryRequested': {
        const { messageId, body } = e.data;
        return doc ?? (messageId !== undefined && body !== undefined ? { messageId, body } : null);
      }
      default:
        return doc ?? null;
    }
  },
};
