import { type EventOf, streams } from '../../contracts/events.js';
import { deliveryDecider, isSuccess, retryDelayMs } from '../../domain/webhook/delivery.js';
import { webhookDecider } from '../../domain/webhook/webhook.js';
import type { ReadModelQueries } from '../../projections/index.js';
import type { OutboxDoc } from '../../projections/webhooks/webhooks.js';
import type { CommandHandler } from '../application/commandHandler.js';
import type { EventStore } from '../ports/eventStore.js';
import type { Sender } from './sender.js';
import { secretsOf, signedHeaders } from './signing.js';

export interface DelivererConfig {
  /** SERP_WEBHOOK_BACKOFF_MS: the first retry's delay, doubling per attempt up to an hour (default 5,000) */
  backoffMs: number;
  /** the whole exchange with a receiver (10 s) */
  timeoutMs: number;
  /** attempts in flight at once */
  concurrency: number;
  /** how often the outbox is looked at when nothing wakes the worker */
  tickMs: number;
  /** attempts go on this long after a delivery was scheduled (24 h) */
  giveUpAfterMs: number;
}

export interface AttemptReport {
  eventType: string;
  outcome: 'delivered' | 'retry' | 'given_up';
  latencyMs: number;
}

type Scheduled = EventOf<'WebhookDeliveryScheduled'>['data'];

/**
 * Sends what the outbox holds (docs/webhooks.md). Each attempt is first claimed on the delivery's stream (the event
 * store's optimistic concurrency lets one claim win, so two workers never send the same attempt), then signed with
 * the endpoint's secrets of the moment, POSTed, and its outcome recorded: delivered, retried after a backoff with
 * jitter, or given up (24 h, or 410, which also disables the endpoint). A claim whose worker died is taken again
 * once its lease ends, or at once when `staleBefore` says its worker is a previous life of this process.
 */
export const createDeliverer = (deps: {
  eventStore: EventStore;
  queries: ReadModelQueries;
  handle: CommandHandler;
  sender: Sender;
  pepper: string;
  config: DelivererConfig;
  worker: string;
  /** claims of other workers made before this instant are dead (one process per data directory: embedded mode) */
  staleBefore?: number;
  now?: () => Date;
  random?: () => number;
  onAttempt?: (report: AttemptReport) => void;
  log?: (msg: string, fields: Record<string, unknown>) => void;
}) => {
  const { queries, handle, config } = deps;
  const clock = () => deps.now?.() ?? new Date();
  const random = deps.random ?? Math.random;
  const inFlight = new Set<string>();
  const bodies = new Map<string, Scheduled>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let looking = false;
  let again = false;
  /** when the earliest delivery not taken at the last look comes due, and when that look was */
  let nextDue = 0;
  let lookedAt = 0;
  const running = new Set<Promise<void>>();

  const scheduledOf = async (deliveryId: string): Promise<Scheduled | undefined> => {
    const known = bodies.get(deliveryId);
    if (known) return known;
    const { events } = await deps.eventStore.readStream(streams.webhookDelivery(deliveryId), { maxCount: 1 });
    const first = events[0];
    return first?.type === 'WebhookDeliveryScheduled' ? (first.data as Scheduled) : undefined;
  };

  const claimable = (d: OutboxDoc, at: number) =>
    !inFlight.has(d.deliveryId) &&
    d.due <= at &&
    (d.leaseUntil === undefined ||
      d.leaseUntil <= at ||
      (deps.staleBefore !== undefined && (d.claimedAt ?? 0) < deps.staleBefore && d.worker !== deps.worker));

  const attempt = async (d: OutboxDoc) => {
    const stream = streams.webhookDelivery(d.deliveryId);
    const claimed = await handle(stream, deliveryDecider, {
      type: 'ClaimAttempt',
      deliveryId: d.deliveryId,
      worker: deps.worker,
      now: clock().toISOString(),
      leaseMs: config.timeoutMs + 5_000,
      staleBefore: deps.staleBefore,
    });
    const claim = claimed.events[0];
    if (claim?.type !== 'WebhookAttemptClaimed') return;
    const now = () => clock().toISOString();
    const webhook = queries.webhooks.byId(d.webhookId);
    if (!webhook || webhook.disabled) {
      await handle(stream, deliveryDecider, {
        type: 'GiveUp',
        deliveryId: d.deliveryId,
        reason: webhook ? 'endpoint_disabled' : 'endpoint_deleted',
        now: now(),
      });
      return;
    }
    const scheduled = await scheduledOf(d.deliveryId);
    if (!scheduled) return;
    const at = clock();
    const headers = signedHeaders(secretsOf(deps.pepper, webhook, at), scheduled.messageId, at, scheduled.body);
    const sent = await deps.sender.send(webhook.url, headers, scheduled.body);
    const outcome = {
      ...sent,
      ...(sent.statusCode !== undefined && !isSuccess(sent.statusCode)
        ? {
            error:
              sent.statusCode >= 300 && sent.statusCode < 400
                ? `HTTP ${sent.statusCode}: redirects are not followed`
                : `HTTP ${sent.statusCode}`,
          }
        : {}),
    };
    const res = await handle(stream, deliveryDecider, {
      type: 'RecordAttempt',
      deliveryId: d.deliveryId,
      attempt: claim.data.attempt,
      outcome,
      retryDelayMs: retryDelayMs(claim.data.attempt, config.backoffMs, random()),
      giveUpAfterMs: config.giveUpAfterMs,
      now: now(),
    });
    const recorded = res.events[0];
    if (recorded) {
      bodies.delete(d.deliveryId);
      deps.onAttempt?.({
        eventType: scheduled.eventType,
        outcome:
          recorded.type === 'WebhookDelivered'
            ? 'delivered'
            : recorded.type === 'WebhookDeliveryGivenUp'
              ? 'given_up'
              : 'retry',
        latencyMs: sent.latencyMs,
      });
    }
    if (sent.statusCode === 410) {
      await handle(streams.webhook(d.webhookId), webhookDecider, {
        type: 'DisableGone',
        webhookId: d.webhookId,
        now: now(),
      });
    }
  };

  const look = () => {
    if (stopped) return;
    if (looking) {
      again = true;
      return;
    }
    looking = true;
    try {
      const free = config.concurrency - inFlight.size;
      if (free <= 0) return;
      const at = clock().getTime();
      const pending = queries.webhooks.outbox();
      lookedAt = at;
      nextDue = Number.POSITIVE_INFINITY;
      const ready: OutboxDoc[] = [];
      for (const d of pending) {
        if (claimable(d, at)) ready.push(d);
        else if (!inFlight.has(d.deliveryId)) nextDue = Math.min(nextDue, Math.max(d.due, d.leaseUntil ?? 0));
      }
      const due = ready.sort((a, b) => a.due - b.due).slice(0, free);
      if (ready.length > due.length) nextDue = at;
      for (const d of due) {
        inFlight.add(d.deliveryId);
        const p = attempt(d)
          .catch((err) =>
            deps.log?.('webhook attempt failed', { deliveryId: d.deliveryId, reason: (err as Error).message }),
          )
          .finally(() => {
            inFlight.delete(d.deliveryId);
            running.delete(p);
            // a slot came free: what waits may go now
            setImmediate(look);
          });
        running.add(p);
      }
    } catch (err) {
      deps.log?.('webhook outbox read failed', { reason: (err as Error).message });
    } finally {
      looking = false;
      if (again) {
        again = false;
        setImmediate(look);
      }
    }
  };

  return {
    /** a delivery was scheduled (its body kept for its first attempt): look at the outbox now */
    kick: look,
    remember(s: Scheduled) {
      if (bodies.size < 10_000) bodies.set(s.deliveryId, s);
    },
    start() {
      // between kicks, the outbox is read when something comes due, and at least every second (a retry asked on
      // another process, a claim another worker let lapse)
      timer = setInterval(() => {
        const at = clock().getTime();
        if (at >= nextDue || at - lookedAt >= 1_000) look();
      }, config.tickMs);
      timer.unref();
      look();
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await Promise.allSettled([...running]);
    },
    inFlight: () => inFlight.size,
  };
};
export type Deliverer = ReturnType<typeof createDeliverer>;
