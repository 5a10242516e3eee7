import { z } from 'zod';
import { IsoInstant } from './isoInstant.js';
import { WEBHOOK_EVENT_TYPES } from './webhookEvents.js';

/** The `/v1/webhooks` bodies and answers (docs/webhooks.md). */

export const WEBHOOK_URL_MAX = 2000;
export const WEBHOOKS_PER_KEY = 10;
/** How far back a replay may reach: `since` at most this many days before the request (docs/webhooks.md#replay-bounded). */
export const REPLAY_WINDOW_DAYS = 7;
/** The messages one replay sends at most; a receiver that needs more asks again from the last one's timestamp. */
export const REPLAY_MAX_MESSAGES = 1_000;
/** Replays a key may request in an hour (its keyLimits stream counts them). */
export const REPLAYS_PER_HOUR = 10;

export const WebhookUrl = z
  .string({ error: 'url must be a string such as "https://example.com/hooks/serp"' })
  .trim()
  .min(1, 'url must not be empty')
  .max(WEBHOOK_URL_MAX, `url must be at most ${WEBHOOK_URL_MAX} characters`)
  .describe('where deliveries are POSTed: https (plain http only where the operator allows it)');

/** what an unknown event type is told (the 422's detail, and its example in the OpenAPI) */
export const UNKNOWN_EVENT_TYPE = `each event must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`;

const eventList = z
  .array(
    z.enum(WEBHOOK_EVENT_TYPES, {
      error: UNKNOWN_EVENT_TYPE,
    }),
    { error: 'events must be an array of event types' },
  )
  .min(1, 'events must name at least one event type')
  .max(WEBHOOK_EVENT_TYPES.length)
  .refine((list) => new Set(list).size === list.length, 'events repeats an event type');

const monitorIds = z
  .array(z.string().trim().min(1).max(200), { error: 'monitor_ids must be an array of monitor ids' })
  .min(1, 'monitor_ids must not be empty: leave it out for every monitor of the key')
  .max(100)
  .describe('only these monitors (monitor.* events); absent: every monitor of the key');

export const CreateWebhookBody = z
  .object({ url: WebhookUrl, events: eventList, monitor_ids: monitorIds.optional() })
  .strict()
  .meta({
    examples: [
      { url: 'https://example.com/hooks/serp', events: ['search.completed', 'search.failed'] },
      {
        url: 'https://example.com/hooks/ranks',
        events: ['monitor.alert', 'monitor.run_completed'],
        monitor_ids: ['mon_3f9a1c2b7d4e5f60718293a4'],
      },
    ],
  });
export type CreateWebhookBody = z.infer<typeof CreateWebhookBody>;

export const PatchWebhookBody = z
  .object({
    url: WebhookUrl.optional(),
    events: eventList.optional(),
    monitor_ids: monitorIds.nullable().optional().describe('null: every monitor of the key again'),
    disabled: z.boolean().optional().describe('true stops deliveries; false starts them again'),
  })
  .strict()
  .refine((b) => Object.values(b).some((v) => v !== undefined), 'send at least one change')
  .meta({ examples: [{ events: ['search.completed'] }, { disabled: false }, { monitor_ids: null }] });
export type PatchWebhookBody = z.infer<typeof PatchWebhookBody>;

export const WebhookResponse = z
  .object({
    webhook_id: z.string(),
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
    monitor_ids: z.array(z.string()).nullable(),
    disabled: z.boolean(),
    disabled_reason: z.string().nullable().describe('endpoint_gone: the receiver answered 410; by_key: PATCH'),
    created_at: z.string(),
    updated_at: z.string(),
    previous_secret_expires_at: z
      .string()
      .nullable()
      .describe('after a rotation, deliveries carry a signature with the old secret too until then'),
  })
  .meta({
    examples: [
      {
        webhook_id: 'wh_5d1c9e0a7b3f42e6a8c01d2e',
        url: 'https://example.com/hooks/serp',
        events: ['search.completed', 'search.failed'],
        monitor_ids: null,
        disabled: false,
        disabled_reason: null,
        created_at: '2026-03-02T09:15:00.000Z',
        updated_at: '2026-03-02T09:15:00.000Z',
        previous_secret_expires_at: null,
      },
    ],
  });

export const WebhookCreatedResponse = WebhookResponse.extend({
  secret: z.string().describe('whsec_…: shown once; verify deliveries with it (Standard Webhooks)'),
}).meta({
  examples: [
    {
      webhook_id: 'wh_5d1c9e0a7b3f42e6a8c01d2e',
      url: 'https://example.com/hooks/serp',
      events: ['search.completed', 'search.failed'],
      monitor_ids: null,
      disabled: false,
      disabled_reason: null,
      created_at: '2026-03-02T09:15:00.000Z',
      updated_at: '2026-03-02T09:15:00.000Z',
      previous_secret_expires_at: null,
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    },
  ],
});

export const WebhookList = z.object({ webhooks: z.array(WebhookResponse) });

export const RotateSecretResponse = z
  .object({
    webhook_id: z.string(),
    secret: z.string().describe('the new whsec_… secret, shown once'),
    previous_secret_expires_at: z.string().describe('the old secret keeps verifying until then (24 h)'),
  })
  .meta({
    examples: [
      {
        webhook_id: 'wh_5d1c9e0a7b3f42e6a8c01d2e',
        secret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
        previous_secret_expires_at: '2026-03-03T09:20:00.000Z',
      },
    ],
  });

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

export const DeliveriesQuery = z.object({
  status: z
    .enum(DELIVERY_STATUSES, { error: 'status must be pending, delivered or failed' })
    .optional()
    .describe('pending (waiting for its next attempt), delivered, or failed (given up)'),
  since: IsoInstant.optional().describe('scheduled at or after this ISO date or instant'),
  limit: z.coerce.number({ error: 'limit must be a number' }).int().min(1).max(1000).default(100),
});

export const DeliveryAttempt = z.object({
  attempt: z.number().int(),
  at: z.string(),
  status_code: z.number().int().nullable(),
  latency_ms: z.number(),
  error: z.string().nullable(),
});

export const DeliveryResponse = z.object({
  delivery_id: z.string(),
  message_id: z.string().describe('the webhook-id header: the same on every attempt, retry and replay'),
  event_type: z.enum(WEBHOOK_EVENT_TYPES),
  status: z.enum(DELIVERY_STATUSES),
  scheduled_at: z.string(),
  next_attempt_at: z.string().nullable(),
  delivered_at: z.string().nullable(),
  failure_reason: z.string().nullable().describe('failed: retries_exhausted, endpoint_gone, endpoint_disabled, …'),
  replay_id: z.string().nullable(),
  attempts: z.array(DeliveryAttempt),
});

export const DeliveryList = z.object({ deliveries: z.array(DeliveryResponse) }).meta({
  examples: [
    {
      deliveries: [
        {
          delivery_id: 'dlv_0195a3c4b5d6e1f2a3b4c5d6',
          message_id: 'msg_0195a3c4b5d6a1b2c3d4e5f6a7b8c9d0',
          event_type: 'search.completed',
          status: 'delivered',
          scheduled_at: '2026-03-02T09:16:02.120Z',
          next_attempt_at: null,
          delivered_at: '2026-03-02T09:16:07.480Z',
          failure_reason: null,
          replay_id: null,
          attempts: [
            { attempt: 1, at: '2026-03-02T09:16:02.130Z', status_code: 503, latency_ms: 41, error: 'HTTP 503' },
            { attempt: 2, at: '2026-03-02T09:16:07.440Z', status_code: 200, latency_ms: 38, error: null },
          ],
        },
      ],
    },
  ],
});

export const RetryResponse = z
  .object({ delivery_id: z.string(), status: z.literal('pending'), next_attempt_at: z.string() })
  .meta({
    examples: [
      { delivery_id: 'dlv_0195a3c4b5d6e1f2a3b4c5d6', status: 'pending', next_attempt_at: '2026-03-02T10:00:00.000Z' },
    ],
  });

export const ReplayBody = z
  .object({ since: IsoInstant.describe('every event of the endpoint types recorded since then is sent again') })
  .strict()
  .meta({ examples: [{ since: '2026-03-01T00:00:00Z' }] });

export const ReplayResponse = z
  .object({ replay_id: z.string(), since: z.string(), status: z.literal('scheduled') })
  .meta({
    examples: [{ replay_id: 'rpl_0195a3c4b5d6e1f2a3b4c5d6', since: '2026-03-01T00:00:00Z', status: 'scheduled' }],
  });
