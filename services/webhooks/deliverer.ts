import { type EventOf, streams } from '../../contracts/events.js';
import { deliveryDecider, isSuccess, retryDelayMs } from '../../domain/webhook/delivery.js';
import { webhookDecider } from '../../domain/webhook/webhook.js';
import type { ReadModelQueries } from '../../projections/index.js';
import type { OutboxDoc } from '../../projections/webhooks/webhooks.js';
import type { CommandHandler } from '../application/commandHandler.js';
import { createFairQueue } from '../fairShare/fairQueue.js';
import type { EventStore } from '../ports/eventStore.js';
import { createEndpointCaps } from './endpointCaps.js';
import type { Sender, SendOutcome } from './sender.js';
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
  /**
   * false: one first-come, first-served pool, no share per key or endpoint (what the deliverer was before fair
   * share; kept only as the baseline test/bench/webhookFairness.ts measures against). Default true.
   */
  fairShare?: boolean;
}

export interface AttemptReport {
  eventType: string;
  outcome: 'delivered' | 'retry' | 'given_up';
  latencyMs: number;
}

type Scheduled = EventOf<'WebhookDeliveryScheduled'>['data'];
/** a delivery ready to attempt: the outbox's document */
type Ready = OutboxDoc;
/** what an attempt sends */
type Sent = Pick<Scheduled, 'messageId' | 'body'>;

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
  /** a key's weight against the other keys (its tier's share, default 1) */
  shareOf?: (keyId: string) => number;
  onAttempt?: (report: AttemptReport) => void;
  log?: (msg: string, fields: Record<string, unknown>) => void;
}) => {
  const { queries, handle, config } = deps;
  const clock = () => deps.now?.() ?? new Date();
  const random = deps.random ?? Math.random;
  const inFlight = new Set<string>();
  /** the bodies of deliveries the router just scheduled (their first attempt reads nothing) */
  const bodies = new Map<string, Sent>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  /** when the earliest delivery not taken at the last look comes due, and when that look was */
  let nextDue = 0;
  let lookedAt = 0;
  const running = new Set<Promise<void>>();

  /**
   * What a delivery sends: told by the router, else kept by the outbox (a document per waiting delivery, read by id).
   * Only a delivery whose retry was recorded before retries carried the body is read from its stream.
   */
  const sentOf = async (deliveryId: string): Promise<Sent | undefined> => {
    const known = bodies.get(deliveryId) ?? queries.webhooks.outboxBody(deliveryId);
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
    if (claim?.type !== 'WebhookAttemptClaimed') return undefined;
    const now = () => clock().toISOString();
    const webhook = queries.webhooks.byId(d.webhookId);
    if (!webhook || webhook.disabled) {
      await handle(stream, deliveryDecider, {
        type: 'GiveUp',
        deliveryId: d.deliveryId,
        reason: webhook ? 'endpoint_disabled' : 'endpoint_deleted',
        now: now(),
      });
      return undefined;
    }
    const message = await sentOf(d.deliveryId);
    if (!message) return undefined;
    const at = clock();
    const headers = signedHeaders(secretsOf(deps.pepper, webhook, at), message.messageId, at, message.body);
    const sent = await deps.sender.send(webhook.url, headers, message.body);
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
        eventType: d.eventType,
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
    return sent;
  };

  /**
   * Deliveries ready to attempt: those the router just scheduled (`remember`) and what the last read of the outbox
   * found ready beyond the free slots. A slot that comes free takes the next one from here, so the outbox (every
   * pending delivery, parsed) is read once per tick or wake-up, not once per attempt: reading it per attempt made
   * each delivery cost the whole backlog. A stale entry (sent meanwhile by another worker) is refused by its claim.
   *
   * They wait in the fair queue (services/fairShare/fairQueue.ts; docs/webhooks.md#fair-share): the flows are the
   * keys, weighted by their tier's share, so a key with ten thousand deliveries waiting and a key with one take turns.
   * Within a key each endpoint has a cap on its attempts in flight (AIMD: halved when an attempt times out, one more
   * after each success), and a delivery whose endpoint is at its cap waits aside until one of that endpoint's
   * attempts ends. When every slot is taken, a key still under its share of the slots may start one more (the pool
   * overflows by at most the shares), so a key whose receivers hang cannot hold another key's first attempt back.
   */
  const fair = config.fairShare !== false;
  const queue = createFairQueue<Ready, 'deliveries'>({ classes: ['deliveries'], minShare: 0 });
  const queued = new Map<string, Ready>();
  const QUEUE_MAX = 10_000;
  /** the last read left ready deliveries out of the queue (full): read again when it runs dry */
  let moreReady = false;
  let lookScheduled = false;

  /** who a delivery belongs to: the outbox says (but after a retry recorded before it did: its endpoint says) */
  const keyOf = (d: Ready) => d.keyId ?? queries.webhooks.byId(d.webhookId)?.keyId ?? '';
  const endpoints = createEndpointCaps(config.concurrency);
  /** attempts in flight per key */
  const keyInFlight = new Map<string, number>();
  /** deliveries set aside: their endpoint at its cap (by endpoint), or no slot free and their key over its share */
  const atCap = new Map<string, Ready[]>();
  const overShare: Ready[] = [];

  const enqueue = (d: Ready) => {
    queued.set(d.deliveryId, d);
    const keyId = keyOf(d);
    queue.push(
      d,
      fair ? { cls: 'deliveries', flow: keyId, weight: deps.shareOf?.(keyId) ?? 1 } : { cls: 'deliveries', flow: '' },
    );
  };

  /** the key's share of the slots: the pool split between the keys with work, by weight (at least one) */
  const shareOf = (keyId: string) => {
    let total = 0;
    const active = new Set<string>([...keyInFlight.keys(), ...queue.flows('deliveries').map((f) => f.flow)]);
    active.add(keyId);
    for (const k of active) total += deps.shareOf?.(k) ?? 1;
    return Math.max(1, Math.floor((config.concurrency * (deps.shareOf?.(keyId) ?? 1)) / total));
  };

  /** why `d` cannot start now, or undefined when it can */
  const blocked = (d: Ready): 'endpoint' | 'slots' | undefined => {
    if (!fair) return inFlight.size >= config.concurrency ? 'slots' : undefined;
    if (!endpoints.free(d.webhookId)) return 'endpoint';
    if (inFlight.size < config.concurrency) return undefined;
    return (keyInFlight.get(keyOf(d)) ?? 0) < shareOf(keyOf(d)) ? undefined : 'slots';
  };

  const launch = (d: Ready) => {
    inFlight.add(d.deliveryId);
    const keyId = keyOf(d);
    keyInFlight.set(keyId, (keyInFlight.get(keyId) ?? 0) + 1);
    endpoints.started(d.webhookId);
    let outcome: SendOutcome | undefined;
    const p = attempt(d)
      .then((sent) => {
        outcome = sent;
      })
      .catch((err) =>
        deps.log?.('webhook attempt failed', { deliveryId: d.deliveryId, reason: (err as Error).message }),
      )
      .finally(() => {
        inFlight.delete(d.deliveryId);
        running.delete(p);
        const left = (keyInFlight.get(keyId) ?? 1) - 1;
        if (left > 0) keyInFlight.set(keyId, left);
        else keyInFlight.delete(keyId);
        endpoints.ended(d.webhookId, outcome);
        // what waited for this endpoint, or for a slot, may go now
        for (const w of atCap.get(d.webhookId) ?? []) enqueue(w);
        atCap.delete(d.webhookId);
        for (const w of overShare.splice(0)) enqueue(w);
        pump();
      });
    running.add(p);
  };

  /** starts what may start, in fair order; sets aside what may not (its endpoint at its cap, or no slot for its key) */
  const pump = () => {
    if (stopped) return;
    for (let d = queue.peek(); d !== undefined; d = queue.peek()) {
      const why = blocked(d);
      if (why === 'slots' && !fair) return;
      if (why === undefined) {
        queue.pop();
        queued.delete(d.deliveryId);
        if (!inFlight.has(d.deliveryId)) launch(d);
        continue;
      }
      queue.remove(d);
      if (why === 'endpoint') {
        const list = atCap.get(d.webhookId) ?? [];
        list.push(d);
        atCap.set(d.webhookId, list);
      } else overShare.push(d);
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
        enqueue(d);
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
      if (bodies.size < QUEUE_MAX) bodies.set(s.deliveryId, { messageId: s.messageId, body: s.body });
      if (queued.has(s.deliveryId) || inFlight.has(s.deliveryId)) return;
      if (queued.size < QUEUE_MAX) {
        enqueue({
          deliveryId: s.deliveryId,
          webhookId: s.webhookId,
          keyId: s.keyId,
          eventType: s.eventType,
          scheduledAt: s.scheduledAt,
          due: Date.parse(s.scheduledAt),
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
    /** an endpoint's cap on attempts in flight now (its AIMD state) */
    capOf: (webhookId: string) => endpoints.cap(webhookId),
  };
};
export type Deliverer = ReturnType<typeof createDeliverer>;
