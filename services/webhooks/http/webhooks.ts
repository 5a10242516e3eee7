import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  CreateWebhookBody,
  DeliveriesQuery,
  DeliveryList,
  PatchWebhookBody,
  ReplayBody,
  ReplayResponse,
  RetryResponse,
  RotateSecretResponse,
  WebhookCreatedResponse,
  WebhookList,
  WebhookResponse,
} from '../../../contracts/webhooks.js';
import type { V1Options } from '../../api/routes/v1/options.js';
import { wired } from '../../api/wiring.js';
import { errors } from './webhookErrors.js';

// the ids the examples show stand for the caller's own (docs/api.md#examples)
const webhookId = z
  .string()
  .max(200)
  .meta({ examples: ['wh_5d1c9e0a7b3f42e6a8c01d2e'] });
const params = z.object({ webhook_id: webhookId });
const deliveryParams = z.object({
  webhook_id: webhookId,
  delivery_id: z
    .string()
    .max(200)
    .meta({ examples: ['dlv_0195a3c4b5d6e1f2a3b4c5d6'] }),
});
const tags = ['webhooks'];
const base = { 401: errors.unauthorized, 429: errors.rate, 503: errors.unavailable };

/**
 * `/v1/webhooks` (docs/webhooks.md): signed, durable, replayable deliveries. Another key's endpoint answers 404, as
 * one that does not exist.
 */
export const webhookRoutes: FastifyPluginAsync<V1Options> = async (app, opts) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const webhooks = wired(opts.webhooks, '/v1/webhooks', 'webhook service');

  r.post('/webhooks', {
    config: { limit: 'read' },
    schema: {
      operationId: 'createWebhook',
      tags,
      summary: 'Register an endpoint: its URL, the event types it takes, optionally only some monitors',
      description:
        'Answers 201 with the endpoint and its signing `secret` (whsec_…), shown once. Deliveries are signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature). The URL must be https and its host public; a refused URL is a 422 with the reason. A key has at most 10 endpoints.',
      body: CreateWebhookBody,
      response: { 201: WebhookCreatedResponse, 422: errors.invalidWebhook, ...base },
    },
    handler: async (req, reply) => {
      const out = await webhooks.create(req.apiKey!, req.body, { correlationId: req.id });
      return reply.code(201).header('Location', `/v1/webhooks/${out.webhook_id}`).send(out);
    },
  });

  r.get('/webhooks', {
    config: { limit: 'read' },
    schema: {
      operationId: 'listWebhooks',
      tags,
      summary: "This key's endpoints (secrets are never shown again)",
      response: { 200: WebhookList, ...base },
    },
    handler: async (req) => ({
      webhooks: opts.queries.webhooks.ofKey(req.apiKey!.keyId).map((d) => webhooks.view(d)),
    }),
  });

  r.get('/webhooks/:webhook_id', {
    config: { limit: 'read' },
    schema: {
      operationId: 'getWebhook',
      tags,
      summary: 'One endpoint',
      params,
      response: { 200: WebhookResponse, 404: errors.notFound, 422: errors.invalidParams, ...base },
    },
    handler: async (req) => webhooks.view(webhooks.owned(req.apiKey!, req.params.webhook_id)),
  });

  r.patch('/webhooks/:webhook_id', {
    config: { limit: 'read' },
    schema: {
      operationId: 'changeWebhook',
      tags,
      summary: 'Change the URL, the event types or the monitors; disable or enable it again',
      params,
      body: PatchWebhookBody,
      response: { 200: WebhookResponse, 404: errors.notFound, 422: errors.invalidChange, ...base },
    },
    handler: async (req) => webhooks.change(req.apiKey!, req.params.webhook_id, req.body, { correlationId: req.id }),
  });

  r.post('/webhooks/:webhook_id/rotate-secret', {
    config: { limit: 'read' },
    schema: {
      operationId: 'rotateWebhookSecret',
      tags,
      summary: 'A new signing secret (shown once); the old one keeps verifying for 24 h',
      description:
        'For 24 h every delivery carries two signatures in `webhook-signature` (space-separated, as Standard Webhooks allows): one with the new secret, one with the old, so receivers switch without losing a delivery.',
      params,
      response: { 200: RotateSecretResponse, 404: errors.notFound, 422: errors.invalidParams, ...base },
    },
    handler: async (req) => webhooks.rotate(req.apiKey!, req.params.webhook_id, { correlationId: req.id }),
  });

  r.delete('/webhooks/:webhook_id', {
    config: { limit: 'read' },
    schema: {
      operationId: 'deleteWebhook',
      tags,
      summary: 'Delete an endpoint: nothing more is delivered to it',
      params,
      response: { 204: z.null().describe('deleted'), 404: errors.notFound, 422: errors.invalidParams, ...base },
    },
    handler: async (req, reply) => {
      await webhooks.remove(req.apiKey!, req.params.webhook_id, { correlationId: req.id });
      return reply.code(204).send(null);
    },
  });

  r.get('/webhooks/:webhook_id/deliveries', {
    config: { limit: 'read' },
    schema: {
      operationId: 'listWebhookDeliveries',
      tags,
      summary: 'Deliveries with every attempt (status code, latency, error), oldest first',
      params,
      querystring: DeliveriesQuery,
      response: { 200: DeliveryList, 404: errors.notFound, 422: errors.invalidQuery, ...base },
    },
    handler: async (req) => ({
      deliveries: webhooks.deliveries(req.apiKey!, req.params.webhook_id, req.query),
    }),
  });

  r.post('/webhooks/:webhook_id/deliveries/:delivery_id/retry', {
    config: { limit: 'read' },
    schema: {
      operationId: 'retryWebhookDelivery',
      tags,
      summary: 'Send a delivery again now (same webhook-id), whatever its status; a new 24 h of retries starts',
      params: deliveryParams,
      response: { 202: RetryResponse, 404: errors.deliveryNotFound, 422: errors.invalidParams, ...base },
    },
    handler: async (req, reply) =>
      reply
        .code(202)
        .send(
          await webhooks.retry(req.apiKey!, req.params.webhook_id, req.params.delivery_id, { correlationId: req.id }),
        ),
  });

  r.post('/webhooks/:webhook_id/replay', {
    config: { limit: 'read' },
    schema: {
      operationId: 'replayWebhook',
      tags,
      summary: "Send again, from the event log, every event of the endpoint's types since a time",
      description:
        'Each event is sent again as a new delivery with its original webhook-id (receivers dedupe on it), including events from before the endpoint existed or while it was disabled. Answers 202 at once; the deliveries appear in …/deliveries with the `replay_id`. Bounded: `since` within the last 7 days (422 otherwise), at most 1,000 messages a replay (ask again from the last one for more), 10 replays a key an hour (429 with Retry-After), and a message still waiting for this endpoint (pending) is not scheduled again.',
      params,
      body: ReplayBody,
      response: { 202: ReplayResponse, 404: errors.notFound, 422: errors.invalidReplay, ...base },
    },
    handler: async (req, reply) =>
      reply
        .code(202)
        .send(await webhooks.replay(req.apiKey!, req.params.webhook_id, req.body.since, { correlationId: req.id })),
  });
};
