import { replayOfDelivery } from '../../../contracts/events.js';
import type { OutboxDoc } from '../../../projections/webhooks/webhooks.js';
import { createFairQueue } from '../../fairShare/fairQueue.js';
import { createThreadShare } from '../../fairShare/threadShare.js';
import { type AttemptConfig, type AttemptDeps, createAttempts, type Scheduled } from './attempt.js';
import { createEndpointCaps } from './endpointCaps.js';
import type { SendOutcome } from './sender.js';

export type { AttemptReport } from './attempt.js';

export interface DelivererConfig extends AttemptConfig {
  /** attempts in flight at once */
  concurrency: number;
  /** how often the outbox is looked at when nothing wakes the worker */
  tickMs: number;
}

/** a delivery ready to attempt: the outbox's document */
type Ready = OutboxDoc;

/**
 * Sends what the outbox holds (docs/webhooks.md), each attempt as attempt.ts makes it (claimed, signed, POSTed, its
 * outcome recorded), sharing its pool fairly between keys and narrowing it while its thread is busy.
 */
export const createDeliverer = (
  deps: AttemptDeps & {
    config: DelivererConfig;
    /** a key's weight against the other keys (its tier's share, default 1) */
    shareOf?: (keyId: string) => number;
    log?: (msg: string, fields: Record<string, unknown>) => void;
  },
) => {
  const { queries, config } = deps;
  const clock = () => deps.now?.() ?? new Date();
  const inFlight = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  /** when the earliest delivery not taken at the last look comes due, and when that look was */
  let nextDue = 0;
  let lookedAt = 0;
  const running = new Set<Promise<void>>();
  const QUEUE_MAX = 10_000;
  const attempts = createAttempts(deps, { maxBodies: QUEUE_MAX });

  /**
   * Deliveries ready to attempt: those the router just scheduled (`remember`) and what the last read of the outbox
   * found ready beyond the free slots. A slot that comes free takes the next one from here, so the outbox (every
   * pending delivery, parsed) is read once per tick or wake-up, not once per attempt: reading it per attempt made
   * each delivery cost the whole backlog. A stale entry (sent meanwhile by another worker) is refused by its claim.
   *
   * They wait in the fair queue (services/fairShare/fairQueue.ts; docs/webhooks.md#fair-share): the flows are the
   * keys, weighted by their tier's share, so a key with ten thousand deliveries waiting and a key with one take turns.
   * Within a key each endpoint has a cap on its attempts in flight (AIMD: halved when an attempt times out, one more
   * after each success). Only as many of an endpoint's deliveries as its cap has room for wait in the fair queue; the
   * rest wait aside, first in first out, and an attempt that ends releases what its endpoint now has room for, no
   * more: an endpoint's backlog costs nothing per attempt however long it is. When every slot is taken, a key still
   * under its share of the slots may start one more (the pool overflows by at most the shares): the fair queue is
   * asked for the next delivery of such a key, so a key whose receivers hang cannot hold another key's first attempt
   * back.
   */
  const queue = createFairQueue<Ready, 'deliveries'>({ classes: ['deliveries'], minShare: 0 });
  /** every delivery this worker holds to attempt: in the fair queue or aside */
  const queued = new Map<string, Ready>();
  /**
   * what one key may hold of it: the rest of a key's backlog waits in the outbox for a later read, so one key's
   * thousands of replayed deliveries never fill the queue against another key's next message
   */
  const KEY_MAX = 2_000;
  /** deliveries held per key */
  const heldOf = new Map<string, number>();
  const roomFor = (keyId: string) => queued.size < QUEUE_MAX && (heldOf.get(keyId) ?? 0) < KEY_MAX;
  /** attempts a pump starts before it lets the thread's other work run (docs/architecture.md#background-workers) */
  const PUMP_SLICE = 16;
  /** a read of the outbox is followed by at least this many times its duration without one */
  const LOOK_SPACING = 20;
  /** the last read left ready deliveries out of the queue (full): read again when it runs dry */
  let moreReady = false;
  let lookScheduled: NodeJS.Timeout | NodeJS.Immediate | undefined;
  let pumpScheduled = false;
  /** when the outbox may be read again (its last read's cost, spaced) */
  let lookAllowedAt = 0;

  /** who a delivery belongs to: the outbox says (but after a retry recorded before it did: its endpoint says) */
  const keyOf = (d: Ready) => d.keyId ?? queries.webhooks.byId(d.webhookId)?.keyId ?? '';
  const endpoints = createEndpointCaps(config.concurrency);
  /** attempts in flight per key */
  const keyInFlight = new Map<string, number>();
  /** per endpoint: its deliveries in the fair queue (each may start when its turn comes) */
  const inQueue = new Map<string, number>();
  /** per endpoint: its deliveries set aside, oldest first from `head`, while its cap has no room for them */
  const aside = new Map<string, { items: Ready[]; head: number }>();
  /** the keys with work (in the queue or in flight): how much, and the weight they were counted with */
  const activeKeys = new Map<string, { n: number; weight: number }>();
  let activeWeight = 0;

  const bump = (m: Map<string, number>, k: string, by: number) => {
    const n = (m.get(k) ?? 0) + by;
    if (n > 0) m.set(k, n);
    else m.delete(k);
  };

  const activity = (keyId: string, by: number) => {
    let a = activeKeys.get(keyId);
    if (!a) {
      a = { n: 0, weight: deps.shareOf?.(keyId) ?? 1 };
      activeKeys.set(keyId, a);
      activeWeight += a.weight;
    }
    a.n += by;
    if (a.n <= 0) {
      activeKeys.delete(keyId);
      activeWeight = activeKeys.size === 0 ? 0 : activeWeight - a.weight;
    }
  };

  /**
   * The slots in use now: the pool, narrowed while the thread is busy (services/fairShare/threadShare.ts), so a
   * backlog draining leaves the projector, the dispatcher and the crawler beside it their turns. A sixteenth of the
   * pool at least: a backlog still drains, just slower.
   */
  const thread = createThreadShare({ min: Math.max(1, Math.floor(config.concurrency / 16)), max: config.concurrency });
  let pool = config.concurrency;

  /** the key's share of the slots: the pool split between the keys with work, by weight (at least one) */
  const shareOf = (keyId: string) => {
    const weight = activeKeys.get(keyId)?.weight ?? deps.shareOf?.(keyId) ?? 1;
    const total = activeKeys.has(keyId) ? activeWeight : activeWeight + weight;
    return Math.max(1, Math.floor((pool * weight) / total + 1e-9));
  };
  const underShare = (keyId: string) => (keyInFlight.get(keyId) ?? 0) < shareOf(keyId);

  const toQueue = (d: Ready) => {
    const keyId = keyOf(d);
    queue.push(d, { cls: 'deliveries', flow: keyId, weight: deps.shareOf?.(keyId) ?? 1 });
    bump(inQueue, d.webhookId, 1);
    activity(keyId, 1);
  };

  const outOfQueue = (d: Ready) => {
    bump(inQueue, d.webhookId, -1);
    activity(keyOf(d), -1);
  };

  /** moves the endpoint's deliveries set aside into the fair queue, as many as its cap now has room for */
  const release = (webhookId: string) => {
    const list = aside.get(webhookId);
    if (!list) return;
    let room = endpoints.room(webhookId) - (inQueue.get(webhookId) ?? 0);
    while (room > 0 && list.head < list.items.length) {
      toQueue(list.items[list.head]!);
      list.items[list.head] = undefined as unknown as Ready;
      list.head += 1;
      room -= 1;
    }
    if (list.head === list.items.length) aside.delete(webhookId);
    else if (list.head > 1_024 && list.head * 2 > list.items.length) {
      list.items = list.items.slice(list.head);
      list.head = 0;
    }
  };

  /** a delivery to attempt: it waits behind its endpoint's deliveries set aside, then in the fair queue */
  const enqueue = (d: Ready) => {
    queued.set(d.deliveryId, d);
    bump(heldOf, keyOf(d), 1);
    const list = aside.get(d.webhookId);
    if (list) list.items.push(d);
    else aside.set(d.webhookId, { items: [d], head: 0 });
    release(d.webhookId);
  };

  /** deliveries taken back out of the fair queue (their endpoint's cap shrank): ahead of what waits aside, in order */
  const putBack = (back: Map<string, Ready[]>) => {
    for (const [webhookId, list] of back) {
      const waiting = aside.get(webhookId);
      if (!waiting) aside.set(webhookId, { items: list, head: 0 });
      else if (waiting.head >= list.length) {
        waiting.head -= list.length;
        for (let i = 0; i < list.length; i++) waiting.items[waiting.head + i] = list[i]!;
      } else aside.set(webhookId, { items: [...list, ...waiting.items.slice(waiting.head)], head: 0 });
    }
  };

  const launch = (d: Ready) => {
    inFlight.add(d.deliveryId);
    const keyId = keyOf(d);
    bump(keyInFlight, keyId, 1);
    activity(keyId, 1);
    endpoints.started(d.webhookId);
    let outcome: SendOutcome | undefined;
    const p = attempts
      .attempt(d)
      .then((sent) => {
        outcome = sent;
      })
      .catch((err) =>
        deps.log?.('webhook attempt failed', { deliveryId: d.deliveryId, reason: (err as Error).message }),
      )
      .finally(() => {
        inFlight.delete(d.deliveryId);
        running.delete(p);
        bump(keyInFlight, keyId, -1);
        activity(keyId, -1);
        endpoints.ended(d.webhookId, outcome);
        // what waited for this endpoint may go now: only what its cap has room for
        release(d.webhookId);
        pumpSoon();
      });
    running.add(p);
  };

  /**
   * starts what may start, in fair order, at most PUMP_SLICE attempts before letting the thread's other work run;
   * a delivery whose endpoint's cap shrank while it waited goes back aside, ahead of the others
   */
  const pump = () => {
    pumpScheduled = false;
    if (stopped) return;
    const back = new Map<string, Ready[]>();
    pool = thread.limit();
    // a thread still saturated with the pool at its narrowest: one start, then a pause (threadShare.ts)
    const slice = thread.delay() > 0 ? 1 : PUMP_SLICE;
    for (let started = 0; ; ) {
      if (started >= slice) {
        pumpSoon();
        break;
      }
      const free = inFlight.size < pool;
      const accept = free ? undefined : underShare;
      const d = queue.peek('deliveries', accept);
      if (d === undefined) break;
      if (!endpoints.free(d.webhookId)) {
        queue.remove(d);
        outOfQueue(d);
        const list = back.get(d.webhookId);
        if (list) list.push(d);
        else back.set(d.webhookId, [d]);
        continue;
      }
      queue.pop('deliveries', accept);
      outOfQueue(d);
      queued.delete(d.deliveryId);
      bump(heldOf, keyOf(d), -1);
      if (inFlight.has(d.deliveryId)) continue;
      launch(d);
      started += 1;
    }
    putBack(back);
    if (moreReady && inFlight.size < config.concurrency) lookSoon();
  };

  /** one pump on the next turn (or after the thread's pause), however many attempts end meanwhile */
  const pumpSoon = () => {
    if (pumpScheduled || stopped) return;
    pumpScheduled = true;
    const wait = thread.delay();
    if (wait > 0) setTimeout(pump, wait);
    else setImmediate(pump);
  };

  /** reads the outbox: what is due (or whose claim lapsed) joins the queue; when the rest comes due */
  const look = () => {
    lookScheduled = undefined;
    if (stopped) return;
    const began = performance.now();
    try {
      const at = clock().getTime();
      // a key's replayed deliveries not claimed yet are made from their replays' entries: no more of them than the
      // key may hold (the rest are read once these are sent)
      const pending = queries.webhooks.outbox({ replayedPerKey: KEY_MAX });
      lookedAt = at;
      nextDue = Number.POSITIVE_INFINITY;
      moreReady = false;
      const ready: OutboxDoc[] = [];
      const replayed = new Map<string, number>();
      for (const d of pending) {
        if (d.claimedAt === undefined && replayOfDelivery(d.deliveryId)) {
          const n = (replayed.get(keyOf(d)) ?? 0) + 1;
          replayed.set(keyOf(d), n);
          if (n >= KEY_MAX) moreReady = true;
        }
        if (attempts.unprojected(d.deliveryId)) continue;
        if (!inFlight.has(d.deliveryId) && attempts.claimable(d, at)) {
          if (!queued.has(d.deliveryId)) ready.push(d);
        } else if (!inFlight.has(d.deliveryId)) nextDue = Math.min(nextDue, Math.max(d.due, d.leaseUntil ?? 0));
      }
      for (const d of ready.sort((a, b) => a.due - b.due)) {
        if (queued.size >= QUEUE_MAX) {
          moreReady = true;
          break;
        }
        if (roomFor(keyOf(d))) enqueue(d);
        else moreReady = true;
      }
    } catch (err) {
      deps.log?.('webhook outbox read failed', { reason: (err as Error).message });
    }
    lookAllowedAt = Date.now() + (performance.now() - began) * LOOK_SPACING;
    pump();
  };

  /** one read of the outbox as soon as its spacing allows, however many ask for it meanwhile */
  const lookSoon = () => {
    if (lookScheduled || stopped) return;
    const wait = lookAllowedAt - Date.now();
    lookScheduled = wait > 0 ? setTimeout(look, wait) : setImmediate(look);
  };

  return {
    /** deliveries were scheduled (`remember`ed): attempt them now, as slots allow */
    kick: pumpSoon,
    /** a delivery just scheduled: its body kept for its first attempt, and queued for it without reading the outbox */
    remember(s: Scheduled) {
      attempts.keep(s);
      if (queued.has(s.deliveryId) || inFlight.has(s.deliveryId) || attempts.unprojected(s.deliveryId)) return;
      if (roomFor(s.keyId)) {
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
      if (lookScheduled) {
        clearTimeout(lookScheduled as NodeJS.Timeout);
        clearImmediate(lookScheduled as NodeJS.Immediate);
      }
      await Promise.allSettled([...running]);
    },
    inFlight: () => inFlight.size,
    /** an endpoint's cap on attempts in flight now (its AIMD state) */
    capOf: (webhookId: string) => endpoints.cap(webhookId),
  };
};
export type Deliverer = ReturnType<typeof createDeliverer>;
