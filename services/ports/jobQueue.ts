import type { JobMessage } from '../../contracts/jobMessage.js';
import { LANES, type Lane } from '../../contracts/lanes.js';

/**
 * Where a message waits (docs/fleet.md#lanes-and-fair-share): each lane has its own consumer, so a lane's backlog never
 * holds a crawler slot of another lane, and an express consumer for the jobs that were their key's first out in the
 * lane (`first`), whose slots one key's backlog can never fill.
 */
export type QueueClass = Lane | `${Lane}.first`;
export const QUEUE_CLASSES: readonly QueueClass[] = LANES.flatMap((l): QueueClass[] => [l, `${l}.first`]);
export const queueClassOf = (m: Pick<JobMessage, 'lane' | 'first'>): QueueClass =>
  m.first ? `${m.lane ?? 'live'}.first` : (m.lane ?? 'live');
export const laneOfClass = (c: QueueClass): Lane => c.replace('.first', '') as Lane;

/**
 * A work queue with at-least-once delivery (JetStream's ack vocabulary). Every adapter passes
 * test/conformance/jobQueueSuite.ts (`jobQueueConformance`). Once a delivery has been redelivered (ack wait ran out)
 * or settled, its ack/nak/working/term are ignored; a handler that throws counts as a nak with the queue's backoff.
 */
export interface Delivery {
  readonly message: JobMessage;
  /** 1-based: how many times this message has been delivered */
  readonly attempt: number;
  /** done: never deliver again */
  ack(): Promise<void>;
  /** failed this time: deliver again after `delayMs` (unless max attempts is reached) */
  nak(delayMs?: number): Promise<void>;
  /** still working: push the redelivery deadline back */
  working(): Promise<void>;
  /** give up for good: never deliver again */
  term(reason?: string): Promise<void>;
}

export interface Consumer {
  /** stops taking new messages and waits for the handlers in flight (a clean drain) */
  stop(): Promise<void>;
}

export interface ConsumeOptions {
  /** deliveries at once per class: one number for every class, or per class (a class left out is not consumed) */
  concurrency: number | Partial<Record<QueueClass, number>>;
  /** called when a message is dropped after its last attempt, so the caller can record the failure */
  onExhausted?: (message: JobMessage, attempts: number) => Promise<void> | void;
}

/** How much work waits: what the dashboard and /metrics show as queue depth and age. */
export interface QueueStats {
  /** messages waiting for a delivery (ready now or delayed by a backoff) */
  pending: number;
  /** messages out with a consumer, not yet acked */
  inFlight: number;
  /** how long the oldest pending message has waited since it was enqueued; absent when none waits */
  oldestPendingMs?: number;
  /** the same counts per class (classes with none may be left out) */
  classes?: Partial<Record<QueueClass, { pending: number; inFlight: number }>>;
}

/** a consumer's concurrency per class, every class listed (0: not consumed); throws on a count that is not whole */
export const concurrencyOf = (c: ConsumeOptions['concurrency']): Record<QueueClass, number> => {
  const out = Object.fromEntries(QUEUE_CLASSES.map((k) => [k, typeof c === 'number' ? c : (c[k] ?? 0)])) as Record<
    QueueClass,
    number
  >;
  for (const [k, n] of Object.entries(out)) {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`concurrency of ${k} must be a whole number, got ${n}`);
  }
  if (Object.values(out).every((n) => n === 0)) throw new RangeError('concurrency must be positive for some class');
  return out;
};

export interface JobQueue {
  /**
   * whether what was enqueued outlives this process (JetStream: yes; in process: no). A dispatcher that starts again
   * over a queue that forgot re-enqueues the crawls that were running; over one that keeps them it must not, or a
   * job out with a crawler would go to a second one.
   */
  readonly keepsMessages: boolean;
  /** `duplicate: true` when a message with the same id (jobId + dispatch) was already enqueued */
  enqueue(message: JobMessage, options?: { delayMs?: number }): Promise<{ duplicate: boolean }>;
  consume(handler: (delivery: Delivery) => Promise<void>, options: ConsumeOptions): Consumer;
  stats(): Promise<QueueStats>;
  close(): Promise<void>;
}

export const messageId = (m: Pick<JobMessage, 'jobId' | 'dispatch'>) => `${m.jobId}:${m.dispatch}`;
