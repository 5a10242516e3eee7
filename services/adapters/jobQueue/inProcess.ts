import { JobMessage } from '../../../contracts/jobMessage.js';
import {
  type ConsumeOptions,
  type Consumer,
  concurrencyOf,
  type Delivery,
  type JobQueue,
  messageId,
  QUEUE_CLASSES,
  type QueueClass,
  type QueueStats,
  queueClassOf,
} from '../../ports/jobQueue.js';

export interface InProcessJobQueueOptions {
  /** a delivery neither settled nor extended by `working()` for this long is presumed dead and redelivered */
  ackWaitMs: number;
  /** deliveries per message, the first included; after the last failed one, `onExhausted` */
  maxDeliver: number;
  /**
   * redelivery delay after the n-th failed attempt (a `nak()` without delay, a handler that threw); the last entry
   * repeats. Default: redeliver at once.
   */
  backoffMs?: readonly number[];
  /** enqueuing a message id seen within this window answers `duplicate: true` and adds nothing */
  dedupeWindowMs: number;
  /** an `onExhausted` callback threw (default: stderr) */
  onError?: (error: unknown) => void;
}

export class JobQueueClosedError extends Error {
  readonly code = 'SERP_JOBQUEUE_CLOSED';
  constructor() {
    super('job queue is closed');
    this.name = 'JobQueueClosedError';
  }
}

/** a message waiting (in `waiting`) or out for delivery (then `token` names the one live delivery) */
interface Entry {
  message: JobMessage;
  cls: QueueClass;
  seq: number;
  enqueuedAt: number;
  readyAt: number;
  attempts: number;
  token?: number;
}

interface ConsumerState {
  handler: (delivery: Delivery) => Promise<void>;
  options: ConsumeOptions;
  /** its slots per class */
  slots: Record<QueueClass, number>;
  /** deliveries holding a slot, per class: handler running and ack deadline not passed */
  active: Record<QueueClass, number>;
  stopped: boolean;
  /** handlers and onExhausted calls still running: what stop() drains */
  running: Set<Promise<void>>;
}

const byReadyThenSeq = (a: Entry, b: Entry) => a.readyAt - b.readyAt || a.seq - b.seq;

/**
 * The embedded JobQueue: at-least-once, in memory (a restart loses what is queued; the dispatcher re-enqueues
 * unfinished jobs from the event store).
 *
 * Invariants:
 * - A message is delivered to one handler at a time; each delivery gets a fresh token, and ack/nak/working/term of a
 *   delivery that is no longer current (redelivered after ack wait, or already settled) are ignored.
 * - Each class (a lane, or a lane's express class: ports/jobQueue.ts) is a queue of its own: messages are handed
 *   out in the order they become ready (enqueue time + delay), ties in enqueue order, to a consumer with a slot free
 *   in that class.
 * - `concurrency` bounds the live deliveries of a consumer per class. A handler past its ack deadline is presumed dead and gives
 *   its slot back, so one stuck handler cannot starve the queue; `stop()` still waits for it to return.
 * - Every timer is unref'd: the queue never keeps the process alive.
 */
export const createInProcessJobQueue = (options: InProcessJobQueueOptions): JobQueue => {
  const backoff = options.backoffMs?.length ? options.backoffMs : [0];
  const backoffFor = (attempt: number) => backoff[Math.min(attempt, backoff.length) - 1];
  const onError =
    options.onError ?? ((error: unknown) => process.stderr.write(`job queue onExhausted failed: ${String(error)}\n`));

  const waitingOf = Object.fromEntries(QUEUE_CLASSES.map((c) => [c, [] as Entry[]])) as Record<QueueClass, Entry[]>;
  /** out with a consumer, not settled, per class */
  const inFlight = Object.fromEntries(QUEUE_CLASSES.map((c) => [c, 0])) as Record<QueueClass, number>;
  const recentIds = new Map<string, number>();
  const consumers: ConsumerState[] = [];
  let seq = 0;
  let tokens = 0;
  let nextConsumer = 0;
  let closed = false;
  let closing: Promise<void> | undefined;
  let pumpQueued = false;
  let wakeTimer: NodeJS.Timeout | undefined;

  const schedulePump = () => {
    if (pumpQueued || closed) return;
    pumpQueued = true;
    queueMicrotask(pump);
  };

  const makeReady = (entry: Entry, delayMs: number) => {
    entry.readyAt = Date.now() + Math.max(0, delayMs);
    const waiting = waitingOf[entry.cls];
    let i = waiting.length;
    while (i > 0 && byReadyThenSeq(waiting[i - 1], entry) > 0) i -= 1;
    waiting.splice(i, 0, entry);
    schedulePump();
  };

  const track = (consumer: ConsumerState, work: Promise<void>) => {
    consumer.running.add(work);
    void work.finally(() => consumer.running.delete(work));
  };

  /** after a failed attempt: back in line, or dropped and reported once when it was the last allowed */
  const retryOrExhaust = (entry: Entry, consumer: ConsumerState, delayMs: number) => {
    if (entry.attempts < options.maxDeliver) return makeReady(entry, delayMs);
    const report = async () => {
      try {
        await consumer.options.onExhausted?.(entry.message, entry.attempts);
      } catch (error) {
        onError(error);
      }
    };
    track(consumer, report());
  };

  const deliver = (entry: Entry, consumer: ConsumerState) => {
    const token = ++tokens;
    entry.token = token;
    entry.attempts += 1;
    inFlight[entry.cls] += 1;
    consumer.active[entry.cls] += 1;
    let holdsSlot = true;
    const releaseSlot = () => {
      if (!holdsSlot) return;
      holdsSlot = false;
      consumer.active[entry.cls] -= 1;
      schedulePump();
    };
    const isCurrent = () => !closed && entry.token === token;
    /** when the delivery's ack wait runs out: from its start, or from its last `working()` */
    let dueAt = Date.now() + options.ackWaitMs;
    const expire = () => {
      if (!isCurrent()) return;
      // Re-checked against the clock, as the pump's wake-up is: Node's timers may fire a millisecond early, and a
      // delivery is never presumed dead before its ack wait ran out.
      const left = dueAt - Date.now();
      if (left > 0) {
        deadline = setTimeout(expire, left).unref();
        return;
      }
      settle();
      retryOrExhaust(entry, consumer, 0);
    };
    let deadline = setTimeout(expire, options.ackWaitMs).unref();
    const settle = () => {
      entry.token = undefined;
      inFlight[entry.cls] -= 1;
      clearTimeout(deadline);
      releaseSlot();
    };
    const fail = (delayMs: number) => {
      settle();
      retryOrExhaust(entry, consumer, delayMs);
    };

    const delivery: Delivery = {
      message: entry.message,
      attempt: entry.attempts,
      ack: async () => {
        if (isCurrent()) settle();
      },
      term: async () => {
        if (isCurrent()) settle();
      },
      nak: async (delayMs) => {
        if (isCurrent()) fail(delayMs ?? backoffFor(delivery.attempt));
      },
      working: async () => {
        if (!isCurrent()) return;
        clearTimeout(deadline);
        dueAt = Date.now() + options.ackWaitMs;
        deadline = setTimeout(expire, options.ackWaitMs).unref();
      },
    };

    const run = async () => {
      try {
        await consumer.handler(delivery);
      } catch {
        // A throwing handler is a nak with backoff; what it threw is the handler's to report.
        if (isCurrent()) fail(backoffFor(delivery.attempt));
      } finally {
        // Returning without settling keeps the message out until ack wait, as JetStream does; the slot is free now.
        releaseSlot();
      }
    };
    track(consumer, run());
  };

  const takeConsumer = (cls: QueueClass) => {
    for (let i = 0; i < consumers.length; i += 1) {
      const consumer = consumers[(nextConsumer + i) % consumers.length];
      if (!consumer.stopped && consumer.active[cls] < consumer.slots[cls]) {
        nextConsumer = (nextConsumer + i + 1) % consumers.length;
        return consumer;
      }
    }
    return undefined;
  };

  function pump() {
    pumpQueued = false;
    if (closed) return;
    const now = Date.now();
    let nextAt = Number.POSITIVE_INFINITY;
    for (const cls of QUEUE_CLASSES) {
      const waiting = waitingOf[cls];
      while (waiting.length > 0 && waiting[0].readyAt <= now) {
        const consumer = takeConsumer(cls);
        if (!consumer) break;
        deliver(waiting.shift()!, consumer);
      }
      const next = waiting[0];
      if (next && next.readyAt > now) nextAt = Math.min(nextAt, next.readyAt);
    }
    clearTimeout(wakeTimer);
    wakeTimer = undefined;
    // Re-checked against the clock when it fires: a timer that fires early only re-arms, never delivers early.
    if (nextAt !== Number.POSITIVE_INFINITY) wakeTimer = setTimeout(pump, nextAt - now).unref();
  }

  /** waits for handlers in flight, and for the exhaustion reports they may trigger while we wait */
  const drain = async (consumer: ConsumerState) => {
    while (consumer.running.size > 0) await Promise.allSettled([...consumer.running]);
  };

  const isDuplicate = (id: string, now: number) => {
    // Every id gets the same window, so insertion order is expiry order: prune from the front.
    for (const [seen, expiresAt] of recentIds) {
      if (expiresAt > now) break;
      recentIds.delete(seen);
    }
    if (recentIds.has(id)) return true;
    recentIds.set(id, now + options.dedupeWindowMs);
    return false;
  };

  return {
    keepsMessages: false,
    async enqueue(raw, enqueueOptions) {
      if (closed || closing) throw new JobQueueClosedError();
      // Parsed (and so copied): a caller mutating its object later cannot change a queued message.
      const message = JobMessage.parse(raw);
      if (isDuplicate(messageId(message), Date.now())) return { duplicate: true };
      makeReady(
        { message, cls: queueClassOf(message), seq: ++seq, enqueuedAt: Date.now(), readyAt: 0, attempts: 0 },
        enqueueOptions?.delayMs ?? 0,
      );
      return { duplicate: false };
    },

    consume(handler, consumeOptions) {
      if (closed || closing) throw new JobQueueClosedError();
      const consumer: ConsumerState = {
        handler,
        options: consumeOptions,
        slots: concurrencyOf(consumeOptions.concurrency),
        active: Object.fromEntries(QUEUE_CLASSES.map((c) => [c, 0])) as Record<QueueClass, number>,
        stopped: false,
        running: new Set(),
      };
      consumers.push(consumer);
      schedulePump();
      return {
        async stop() {
          consumer.stopped = true;
          await drain(consumer);
          const index = consumers.indexOf(consumer);
          if (index >= 0) consumers.splice(index, 1);
        },
      } satisfies Consumer;
    },

    async stats(): Promise<QueueStats> {
      const all = QUEUE_CLASSES.flatMap((c) => waitingOf[c]);
      const oldest = all.reduce((min, e) => Math.min(min, e.enqueuedAt), Number.POSITIVE_INFINITY);
      return {
        pending: all.length,
        inFlight: QUEUE_CLASSES.reduce((n, c) => n + inFlight[c], 0),
        ...(all.length > 0 ? { oldestPendingMs: Math.max(0, Date.now() - oldest) } : {}),
        classes: Object.fromEntries(
          QUEUE_CLASSES.map((c) => [c, { pending: waitingOf[c].length, inFlight: inFlight[c] }]),
        ),
      };
    },

    close() {
      closing ??= (async () => {
        // Drain first, so acks of the handlers in flight still count; then nothing is delivered again.
        for (const consumer of consumers) consumer.stopped = true;
        await Promise.all(consumers.map(drain));
        closed = true;
        clearTimeout(wakeTimer);
        consumers.length = 0;
        for (const c of QUEUE_CLASSES) waitingOf[c].length = 0;
      })();
      return closing;
    },
  };
};
