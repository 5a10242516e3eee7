import { z } from 'zod';

/**
 * Webhooks as events (docs/webhooks.md). Streams: `webhook-<id>` (an endpoint's configuration, its secrets and
 * replays) and `webhookDelivery-<id>` (one message to one endpoint: scheduled, claimed, attempted, delivered or given
 * up). A monitor's alerts are rank tracking's (contracts/monitorAlerts.ts). Dates are ISO strings.
 */
const iso = z.string();

export const WEBHOOK_EVENT_TYPES = [
  'search.completed',
  'search.failed',
  'monitor.run_completed',
  'monitor.alert',
  'quota.low',
  'quota.exhausted',
] as const;
export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES);
export type WebhookEventType = z.infer<typeof WebhookEventType>;

export const WebhookCreated = z.object({
  type: z.literal('WebhookCreated'),
  data: z.object({
    webhookId: z.string(),
    keyId: z.string(),
    url: z.string(),
    events: z.array(WebhookEventType),
    monitorIds: z.array(z.string()).optional(),
    /** the signing secret is derived from it and the server's key pepper: the secret itself is never recorded */
    secretSeed: z.string(),
    createdAt: iso,
  }),
});
export const WebhookChanged = z.object({
  type: z.literal('WebhookChanged'),
  data: z.object({
    webhookId: z.string(),
    url: z.string().optional(),
    events: z.array(WebhookEventType).optional(),
    /** null: every monitor of the key again */
    monitorIds: z.array(z.string()).nullable().optional(),
    disabled: z.boolean().optional(),
    /** why the service disabled it (`endpoint_gone`: the receiver answered 410) */
    disabledReason: z.string().optional(),
    changedAt: iso,
  }),
});
export const WebhookSecretRotated = z.object({
  type: z.literal('WebhookSecretRotated'),
  data: z.object({
    webhookId: z.string(),
    secretSeed: z.string(),
    /** the secret before: deliveries are signed with both until `previousValidUntil` */
    previousSeed: z.string(),
    previousValidUntil: iso,
    rotatedAt: iso,
  }),
});
export const WebhookDeleted = z.object({
  type: z.literal('WebhookDeleted'),
  data: z.object({ webhookId: z.string(), deletedAt: iso }),
});
/** Sends again every event of the endpoint's types recorded since `since` and before this request (docs/webhooks.md). */
export const WebhookReplayRequested = z.object({
  type: z.literal('WebhookReplayRequested'),
  data: z.object({ webhookId: z.string(), replayId: z.string(), since: iso, requestedAt: iso }),
});

/**
 * A replay, recorded by reference (docs/webhooks.md#replay-recorded-by-reference): the endpoint, the window of the log
 * it read (`fromPosition` exclusive to `toPosition`, the request's position, found from `since`), and what it selected,
 * one short entry per message: the position of the log event the message is made from, its `webhook-id` and its type.
 * No body: an attempt rebuilds it from that event, as the router made it. The first event of stream
 * `webhookReplay-<replayId>`, where its deliveries' attempts are recorded after it; the delivery of entry `i` has a
 * derived id (`domain/webhook/ids.ts`). `capped`: the window held more than a replay sends (REPLAY_MAX_MESSAGES);
 * `skipped`: messages already waiting for the endpoint, not selected again.
 */
export const WebhookReplayScheduled = z.object({
  type: z.literal('WebhookReplayScheduled'),
  data: z.object({
    replayId: z.string(),
    webhookId: z.string(),
    keyId: z.string(),
    since: iso,
    requestedAt: iso,
    scheduledAt: iso,
    fromPosition: z.number().int().nonnegative(),
    toPosition: z.number().int().nonnegative(),
    /** the origin links in `data` were built on (SERP_PUBLIC_BASE_URL): an attempt rebuilds the body with it */
    baseUrl: z.string(),
    selected: z.number().int().nonnegative(),
    capped: z.boolean(),
    skipped: z.number().int().nonnegative(),
    /** [log position of the source event, `webhook-id`, event type], oldest first */
    messages: z.array(z.tuple([z.number().int().nonnegative(), z.string(), WebhookEventType])),
  }),
});

/**
 * One message to one endpoint. `body` is the exact JSON sent on every attempt (`{type, timestamp, data}`);
 * `messageId` is the `webhook-id` header, derived from the event it tells of, so a retry, a crash and a replay all
 * send the same id and receivers dedupe on it.
 */
export const WebhookDeliveryScheduled = z.object({
  type: z.literal('WebhookDeliveryScheduled'),
  data: z.object({
    deliveryId: z.string(),
    webhookId: z.string(),
    keyId: z.string(),
    messageId: z.string(),
    eventType: WebhookEventType,
    body: z.string(),
    /** when the event it tells of happened */
    occurredAt: iso,
    /** a replay's id, when it is one */
    replayId: z.string().optional(),
    scheduledAt: iso,
  }),
});
/** A worker takes the next attempt (optimistic concurrency on the delivery's stream: one claim wins). */
export const WebhookAttemptClaimed = z.object({
  type: z.literal('WebhookAttemptClaimed'),
  data: z.object({
    deliveryId: z.string(),
    attempt: z.number().int().positive(),
    worker: z.string(),
    claimedAt: iso,
    /** another worker may claim the attempt again after this (the claimer died) */
    leaseUntil: iso,
    /**
     * The first claim of a replayed delivery (added later) says what the delivery is, so the read models list it from
     * then on by its own document (before it, the replay's entry stands for it; its id names the replay):
     * docs/webhooks.md#replay-recorded-by-reference.
     */
    opened: z
      .object({
        webhookId: z.string(),
        keyId: z.string(),
        messageId: z.string(),
        eventType: WebhookEventType,
        scheduledAt: iso,
      })
      .optional(),
  }),
});
const attemptOutcome = {
  deliveryId: z.string(),
  webhookId: z.string(),
  eventType: WebhookEventType,
  attempt: z.number().int().positive(),
  /** the receiver's HTTP status; absent when none came (timeout, refused, an address refused) */
  statusCode: z.number().int().optional(),
  /** why the attempt failed, for the endpoint's owner (never the receiver's body) */
  error: z.string().optional(),
  latencyMs: z.number().nonnegative(),
};
/** An attempt failed and will be tried again at `nextAttemptAt`. */
export const WebhookDeliveryAttempted = z.object({
  type: z.literal('WebhookDeliveryAttempted'),
  data: z.object({ ...attemptOutcome, attemptedAt: iso, nextAttemptAt: iso }),
});
export const WebhookDelivered = z.object({
  type: z.literal('WebhookDelivered'),
  data: z.object({ ...attemptOutcome, statusCode: z.number().int(), deliveredAt: iso }),
});
/**
 * No more attempts: `retries_exhausted` (24 h), `endpoint_gone` (410), `endpoint_disabled`, `endpoint_deleted`,
 * `message_gone` (a replayed message whose job was purged since: docs/webhooks.md#replay-recorded-by-reference).
 */
export const WebhookDeliveryGivenUp = z.object({
  type: z.literal('WebhookDeliveryGivenUp'),
  data: z.object({
    ...attemptOutcome,
    attempt: z.number().int().nonnegative(),
    latencyMs: z.number().nonnegative().optional(),
    reason: z.string(),
    givenUpAt: iso,
  }),
});
/**
 * The key asked for another try now (`POST …/deliveries/{id}/retry`): a new 24 h window starts. It carries the
 * delivery's key, `webhook-id` and body (added later), so the outbox holds them again for a delivery that had ended.
 */
export const WebhookDeliveryRetryRequested = z.object({
  type: z.literal('WebhookDeliveryRetryRequested'),
  data: z.object({
    deliveryId: z.string(),
    webhookId: z.string(),
    eventType: WebhookEventType,
    requestedAt: iso,
    keyId: z.string().optional(),
    messageId: z.string().optional(),
    body: z.string().optional(),
  }),
});
