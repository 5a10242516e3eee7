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

  /**
   * Deliveries ready to attempt, oldest due first: those the router just scheduled (`remember`) and what the last
   * read of the outbox found ready beyond the free slots. A slot that comes free takes the next one from here, so the
   * outbox (every pending delivery, parsed) is read once per tick or wake-up, not once per attempt: reading it per
   * attempt made each delivery cost the whole backlog. A stale entry (sent meanwhile by another worker) is refused
   * by its claim.
   */
  const queued = new Map<string, OutboxDoc>();
  const QUEUE_MAX = 10_000;
  /** the last read left ready deliveries out of the queue (full): read again when it runs dry */
  let moreReady = false;
  let lookScheduled = false;

  const launch = (d: OutboxDoc) => {
    inFlight.add(d.deliveryId);
    const p = attempt(d)
      .catch((err) =>
        deps.log?.('webhook attempt failed', { deliveryId: d.deliveryId, reason: (err as Error).message }),
      )
      .finally(() => {
        inFlight.delete(d.deliveryId);
        running.delete(p);
        // a slot came free: what waits may go now
        pump();
      });
    running.add(p);
  };

  /** fills the free slots from the queue; reads the outbox when it ran dry and the last read left some out */
  const pump = () => {
    if (stopped) return;
    for (const [id, d] of queued) {
      if (inFlight.size >= config.concurrency) return;
      queued.delete(id);
      if (!inFlight.has(id)) launch(d);
    }
    if (moreReady && inFlight.size < config.concurrency) lookSoon();
  };

  /** reads the outbox: what is due (or whose claim lapsed) joins the queue; when the rest comes due */
  const look = () => {
    lookScheduled = false;
    if (stopped) return;
    try {
      const at = clock().getTime();
      const pending = queries.webhooks.outbox();
      lookedAt = at;
      nextDue = Number.POSITIVE_INFINITY;
      moreReady = false;
      const ready: OutboxDoc[] = [];
      for (const d of pending) {
        if (claimable(d, at)) {
          if (!queued.has(d.deliveryId)) ready.push(d);
        } else if (!inFlight.has(d.deliveryId)) nextDue = Math.min(nextDue, Math.max(d.due, d.leaseUntil ?? 0));
      }
      for (const d of ready.sort((a, b) => a.due - b.due)) {
        if (queued.size >= QUEUE_MAX) {
          moreReady = true;
          break;
        }
        queued.set(d.deliveryId, d);
      }
    } catch (err) {
      deps.log?.('webhook outbox read failed', { reason: (err as Error).message });
    }
    pump();
  };

  /** one read of the outbox on the next turn, however many ask for it in this one */
  const lookSoon = () => {
    if (lookScheduled || stopped) return;
    lookScheduled = true;
    setImmediate(look);
  };

  return {
    /** deliveries were scheduled (`remember`ed): attempt them now, as slots allow */
    kick: pump,
    /** a delivery just scheduled: its body kept for its first attempt, and queued for it without reading the outbox */
    remember(s: Scheduled) {
      if (bodies.size < QUEUE_MAX) bodies.set(s.deliveryId, s);
      if (queued.size < QUEUE_MAX && !inFlight.has(s.deliveryId)) {
        const due = Date.parse(s.scheduledAt);
        queued.set(s.deliveryId, {
          deliveryId: s.deliveryId,
          webhookId: s.webhookId,
          eventType: s.eventType,
          scheduledAt: s.scheduledAt,
          due,
        });
      } else moreReady = true;
    },
    start() {
      // between kicks, the outbox is read when something comes due, and at least every second (a retry asked on
      // another process, a claim another worker let lapse)
      timer = setInterval(() => {
        const at = clock().getTime();
        if (at >= nextDue || at - lookedAt >= 1_000) lookSoon();
      }, config.tickMs);
      timer.unref();
      lookSoon();
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
