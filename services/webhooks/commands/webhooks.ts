import { randomBytes } from 'node:crypto';
import { streams } from '../../../contracts/events.js';
import {
  type CreateWebhookBody,
  type DELIVERY_STATUSES,
  type PatchWebhookBody,
  REPLAY_WINDOW_DAYS,
  REPLAYS_PER_HOUR,
  WEBHOOKS_PER_KEY,
} from '../../../contracts/webhooks.js';
import { DomainError, errorCodes } from '../../../domain/kernel/errors.js';
import { keyLimitsDecider } from '../../../domain/keyLimits/keyLimits.js';
import { deliveryDecider } from '../../../domain/webhook/delivery.js';
import { replayIdOf } from '../../../domain/webhook/ids.js';
import { webhookDecider } from '../../../domain/webhook/webhook.js';
import type { ApiKeyDoc } from '../../../projections/apiKeys/apiKeys.js';
import type { ReadModelQueries } from '../../../projections/index.js';
import type { DeliveryDoc, WebhookDoc } from '../../../projections/webhooks/webhooks.js';
import type { CommandContext, CommandHandler } from '../../ports/commandHandler.js';
import { checkUrl, type Resolver, resolveChecked, type SafetyOptions, UnsafeUrlError } from './webhookSafety.js';
import { newSecretSeed, secretOf } from './webhookSigning.js';

/** the old secret keeps verifying this long after a rotation */
export const ROTATION_GRACE_MS = 24 * 3_600_000;

const invalid = (message: string) => new DomainError(errorCodes.webhookInvalid, message);

export const webhookView = (doc: WebhookDoc, at = new Date()) => ({
  webhook_id: doc.webhookId,
  url: doc.url,
  events: doc.events,
  monitor_ids: doc.monitorIds ?? null,
  disabled: doc.disabled,
  disabled_reason: doc.disabledReason ?? null,
  created_at: doc.createdAt,
  updated_at: doc.updatedAt,
  previous_secret_expires_at:
    doc.previousValidUntil && Date.parse(doc.previousValidUntil) > at.getTime() ? doc.previousValidUntil : null,
});

export const deliveryView = (d: DeliveryDoc) => ({
  delivery_id: d.deliveryId,
  message_id: d.messageId,
  event_type: d.eventType,
  status: d.status,
  scheduled_at: d.scheduledAt,
  next_attempt_at: d.status === 'pending' ? (d.nextAttemptAt ?? null) : null,
  delivered_at: d.deliveredAt ?? null,
  failure_reason: d.failureReason ?? null,
  replay_id: d.replayId ?? null,
  attempts: d.attempts.map(([attempt, at, status, latency, error]) => ({
    attempt,
    at,
    status_code: status || null,
    latency_ms: latency,
    error: error || null,
  })),
});

/**
 * The api's side of webhooks (docs/webhooks.md): endpoints of a key, their deliveries, retries and replays. Writes
 * answer once their events are in this process's read models, so the next read sees them. A URL is checked when it
 * is registered (scheme, and every address its host resolves to) and again at every delivery.
 */
export const createWebhookService = (deps: {
  queries: ReadModelQueries;
  handle: CommandHandler;
  projected(position: number): Promise<void>;
  pepper: string;
  safety: SafetyOptions;
  resolve: Resolver;
  now?: () => Date;
}) => {
  const { queries, handle } = deps;
  const now = () => deps.now?.() ?? new Date();
  const settle = async (position: number | undefined) => {
    if (position !== undefined) await deps.projected(position);
  };
  const owned = (key: ApiKeyDoc, webhookId: string): WebhookDoc => {
    const doc = queries.webhooks.byId(webhookId);
    if (!doc || doc.keyId !== key.keyId) throw new DomainError(errorCodes.webhookNotFound, 'webhook not found');
    return doc;
  };
  const checkTarget = async (raw: string) => {
    try {
      const url = checkUrl(raw, deps.safety);
      await resolveChecked(url, deps.resolve, deps.safety.allowPrivate);
      return url.toString();
    } catch (err) {
      if (err instanceof UnsafeUrlError) throw new DomainError('SERP_WEBHOOK_URL_REFUSED', err.message);
      throw err;
    }
  };
  const freeLimit = (key: ApiKeyDoc, kind: 'webhook', id: string, reason: string, ctx: CommandContext) =>
    handle(
      streams.keyLimits(key.keyId),
      keyLimitsDecider,
      { type: 'Free', keyId: key.keyId, kind, id, reason, now: now().toISOString() },
      ctx,
    );
  const checkMonitors = (key: ApiKeyDoc, ids: string[] | null | undefined) => {
    for (const id of ids ?? []) {
      if (queries.monitors.byId(id)?.keyId !== key.keyId)
        throw invalid(`monitor_ids: monitor ${id.slice(0, 100)} not found`);
    }
    if (ids && new Set(ids).size !== ids.length) throw invalid('monitor_ids repeats a monitor');
  };

  return {
    owned,
    view: (doc: WebhookDoc) => webhookView(doc, now()),

    async create(key: ApiKeyDoc, body: CreateWebhookBody, ctx: CommandContext = {}) {
      checkMonitors(key, body.monitor_ids);
      const url = await checkTarget(body.url);
      const webhookId = `wh_${randomBytes(12).toString('hex')}`;
      const secretSeed = newSecretSeed();
      // the endpoint is taken on the key's limits stream first: parallel creates are decided one after the other
      await handle(
        streams.keyLimits(key.keyId),
        keyLimitsDecider,
        {
          type: 'Take',
          keyId: key.keyId,
          kind: 'webhook',
          id: webhookId,
          limit: WEBHOOKS_PER_KEY,
          current: queries.webhooks.ofKey(key.keyId).length,
          exists: (id) => queries.webhooks.byId(id) !== undefined,
          refusal: (count) =>
            `a key may have ${WEBHOOKS_PER_KEY} webhook endpoints and this one has ${count}: delete one first`,
          now: now().toISOString(),
        },
        ctx,
      );
      const res = await handle(
        streams.webhook(webhookId),
        webhookDecider,
        {
          type: 'CreateWebhook',
          webhookId,
          keyId: key.keyId,
          url,
          events: body.events,
          ...(body.monitor_ids ? { monitorIds: body.monitor_ids } : {}),
          secretSeed,
          now: now().toISOString(),
        },
        { ...ctx, newStream: true },
      ).catch(async (err) => {
        await freeLimit(key, 'webhook', webhookId, 'abandoned', ctx);
        throw err;
      });
      await settle(res.position);
      return { ...webhookView(owned(key, webhookId), now()), secret: secretOf(deps.pepper, secretSeed) };
    },

    async change(key: ApiKeyDoc, webhookId: string, body: PatchWebhookBody, ctx: CommandContext = {}) {
      owned(key, webhookId);
      checkMonitors(key, body.monitor_ids);
      const url = body.url !== undefined ? await checkTarget(body.url) : undefined;
      const res = await handle(
        streams.webhook(webhookId),
        webhookDecider,
        {
          type: 'ChangeWebhook',
          webhookId,
          keyId: key.keyId,
          url,
          events: body.events,
          monitorIds: body.monitor_ids,
          disabled: body.disabled,
          now: now().toISOString(),
        },
        ctx,
      );
      await settle(res.position);
      return webhookView(owned(key, webhookId), now());
    },

    async rotate(key: ApiKeyDoc, webhookId: string, ctx: CommandContext = {}) {
      owned(key, webhookId);
      const secretSeed = newSecretSeed();
      const res = await handle(
        streams.webhook(webhookId),
        webhookDecider,
        {
          type: 'RotateSecret',
          webhookId,
          keyId: key.keyId,
          secretSeed,
          graceMs: ROTATION_GRACE_MS,
          now: now().toISOString(),
        },
        ctx,
      );
      await settle(res.position);
      const doc = owned(key, webhookId);
      return {
        webhook_id: webhookId,
        secret: secretOf(deps.pepper, secretSeed),
        previous_secret_expires_at: doc.previousValidUntil as string,
      };
    },

    async remove(key: ApiKeyDoc, webhookId: string, ctx: CommandContext = {}) {
      owned(key, webhookId);
      const res = await handle(
        streams.webhook(webhookId),
        webhookDecider,
        { type: 'DeleteWebhook', webhookId, keyId: key.keyId, now: now().toISOString() },
        ctx,
      );
      if (res.events.length > 0) await freeLimit(key, 'webhook', webhookId, 'deleted', ctx);
      await settle(res.position);
    },

    deliveries(
      key: ApiKeyDoc,
      webhookId: string,
      filter: { status?: (typeof DELIVERY_STATUSES)[number]; since?: string; limit: number },
    ) {
      owned(key, webhookId);
      return queries.webhooks
        .deliveriesPage(webhookId, {
          status: filter.status,
          since: filter.since ? new Date(filter.since).toISOString() : undefined,
          last: filter.limit,
        })
        .map(deliveryView);
    },

    async retry(key: ApiKeyDoc, webhookId: string, deliveryId: string, ctx: CommandContext = {}) {
      owned(key, webhookId);
      const d = queries.webhooks.delivery(deliveryId);
      if (!d || d.webhookId !== webhookId) throw new DomainError(errorCodes.deliveryNotFound, 'delivery not found');
      const at = now().toISOString();
      const res = await handle(
        streams.webhookDelivery(deliveryId),
        deliveryDecider,
        { type: 'RequestRetry', deliveryId, now: at },
        ctx,
      );
      await settle(res.position);
      return { delivery_id: deliveryId, status: 'pending' as const, next_attempt_at: at };
    },

    async replay(key: ApiKeyDoc, webhookId: string, since: string, ctx: CommandContext = {}) {
      owned(key, webhookId);
      const at = now();
      if (Date.parse(since) > at.getTime()) throw invalid('since must not be in the future');
      if (Date.parse(since) < at.getTime() - REPLAY_WINDOW_DAYS * 86_400_000) {
        throw invalid(
          `since must be within the last ${REPLAY_WINDOW_DAYS} days (at or after ${new Date(at.getTime() - REPLAY_WINDOW_DAYS * 86_400_000).toISOString()}): replay a longer outage in steps`,
        );
      }
      const replayId = replayIdOf(at.getTime(), randomBytes(6).toString('hex'));
      // counted on the key's limits stream first: parallel requests cannot pass the hourly limit
      await handle(
        streams.keyLimits(key.keyId),
        keyLimitsDecider,
        { type: 'RequestReplay', keyId: key.keyId, replayId, perHour: REPLAYS_PER_HOUR, now: at.toISOString() },
        ctx,
      );
      const res = await handle(
        streams.webhook(webhookId),
        webhookDecider,
        {
          type: 'RequestReplay',
          webhookId,
          keyId: key.keyId,
          replayId,
          since: new Date(since).toISOString(),
          now: at.toISOString(),
        },
        ctx,
      );
      await settle(res.position);
      return { replay_id: replayId, since: new Date(since).toISOString(), status: 'scheduled' as const };
    },
  };
};
export type WebhookService = ReturnType<typeof createWebhookService>;
