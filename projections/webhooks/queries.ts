import type { DocReader } from '../projection.js';
import {
  type DeliveryDoc,
  type OutboxBodyDoc,
  type OutboxDoc,
  type WebhookDoc,
  webhookDeliveriesProjection,
  webhookOutboxBodiesProjection,
  webhookOutboxProjection,
  webhooksProjection,
} from './webhooks.js';

export const webhookQueries = (docs: DocReader) => ({
  byId: (webhookId: string) => docs.get<WebhookDoc>(webhooksProjection.name, webhookId),
  /** the key's endpoints, by id */
  ofKey: (keyId: string) => docs.listByLookup<WebhookDoc>(webhooksProjection.name, keyId),
  delivery: (deliveryId: string) => docs.get<DeliveryDoc>(webhookDeliveriesProjection.name, deliveryId),
  /** an endpoint's deliveries, oldest first (ids are time-ordered) */
  deliveriesOf: (webhookId: string) => docs.listByLookup<DeliveryDoc>(webhookDeliveriesProjection.name, webhookId),
  /**
   * The newest `last` deliveries of an endpoint with the status (when given) and scheduled at or after `since` (an ISO
   * instant), oldest first: filtered and paged by the store, so `?limit=1` reads one document whatever the endpoint holds.
   */
  deliveriesPage: (webhookId: string, filter: { status?: string; since?: string; last: number }) =>
    docs.listByLookup<DeliveryDoc>(webhookDeliveriesProjection.name, webhookId, {
      last: filter.last,
      equal: filter.status ? { status: filter.status } : {},
      atLeast: filter.since ? { scheduledAt: filter.since } : {},
    }),
  /** every delivery waiting for an attempt */
  outbox: () => docs.listByLookup<OutboxDoc>(webhookOutboxProjection.name, 'pending'),
  /** what a waiting delivery sends: its `webhook-id` and body */
  outboxBody: (deliveryId: string) => docs.get<OutboxBodyDoc>(webhookOutboxBodiesProjection.name, deliveryId),
});
export type WebhookQueries = ReturnType<typeof webhookQueries>;
