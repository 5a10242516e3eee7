import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ReadModelQueries } from '../../../projections/index.js';
import type { AttemptReport } from './deliverer.js';

/**
 * The delivery worker's Prometheus metrics (docs/webhooks.md#metrics), in the write side's registry: attempts by
 * event type and outcome, attempt latency, and the outbox's depth and oldest pending delivery (read from the outbox
 * view when scraped).
 */
export const webhookMetrics = (registry: Registry, queries: ReadModelQueries) => {
  const attempts = new Counter({
    name: 'serp_webhook_attempts_total',
    help: 'Webhook delivery attempts, by event type and outcome (delivered, retry, given_up)',
    labelNames: ['type', 'outcome'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'serp_webhook_attempt_seconds',
    help: 'Webhook delivery attempt latency, connection to answer (or failure)',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  // one read of the outbox per scrape for both gauges (a backlog makes it long), counted without a document for each
  // replayed delivery not claimed yet (a scrape during ten replays made 10,000 of them on the write side's thread)
  let read: { at: number; depth: number; oldest: number } | undefined;
  const outbox = () => {
    const now = Date.now();
    if (read && now - read.at < 250) return read;
    const stats = queries.webhooks.outboxStats();
    read = { at: now, depth: stats.depth, oldest: stats.oldest ?? Number.POSITIVE_INFINITY };
    return read;
  };
  new Gauge({
    name: 'serp_webhook_outbox_depth',
    help: 'Webhook deliveries pending (waiting for an attempt or a retry)',
    registers: [registry],
    collect() {
      this.set(outbox().depth);
    },
  });
  new Gauge({
    name: 'serp_webhook_outbox_oldest_seconds',
    help: 'Age of the oldest pending webhook delivery (0: none)',
    registers: [registry],
    collect() {
      const { oldest } = outbox();
      this.set(Number.isFinite(oldest) ? Math.max(0, (Date.now() - oldest) / 1000) : 0);
    },
  });
  return (report: AttemptReport) => {
    attempts.inc({ type: report.eventType, outcome: report.outcome });
    latency.observe(report.latencyMs / 1000);
  };
};
