import type { JobMessage } from '../../contracts/jobMessage.js';

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
  concurrency: number;
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
}

export interface JobQueue {
  /** `duplicate: true` when a message with the same id (jobId + dispatch) was already enqueued */
  enqueue(message: JobMessage, options?: { delayMs?: number }): Promise<{ duplicate: boolean }>;
  consume(handler: (delivery: Delivery) => Promise<void>, options: ConsumeOptions): Consumer;
  stats(): Promise<QueueStats>;
  close(): Promise<void>;
}

export const messageId = (m: Pick<JobMessage, 'jobId' | 'dispatch'>) => `${m.jobId}:${m.dispatch}`;
