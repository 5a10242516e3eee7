import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import type { JobMessage } from '../../contracts/jobMessage.js';
import { SearchRequest } from '../../contracts/search.js';
import type { ConsumeOptions, Delivery, JobQueue } from '../../services/ports/jobQueue.js';

/** the queue settings the suite needs; each adapter maps them onto its own configuration */
export interface JobQueueSettings {
  ackWaitMs: number;
  maxDeliver: number;
  backoffMs?: number[];
  dedupeWindowMs: number;
}

export interface JobQueueFixture {
  queue: JobQueue;
  /** closes the queue and removes whatever the fixture created */
  cleanup(): Promise<void>;
}

/** generous: these only turn a hang into a failure, they never measure speed */
export const WAIT_MS = 15_000;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const jobMessage = (overrides: Partial<JobMessage> = {}): JobMessage => ({
  jobId: randomBytes(12).toString('hex'),
  dispatch: 0,
  keyId: 'key-1',
  cacheKey: 'coffee|desktop',
  submittedAt: new Date().toISOString(),
  request: SearchRequest.parse({ keyword: 'coffee' }),
  ...overrides,
});

export interface Recorded {
  delivery: Delivery;
  at: number;
}

/**
 * Records every delivery and lets a test wait until a condition holds; `respond` decides what the handler does with
 * each delivery (ack, nak, stall, throw).
 */
export const createRecorder = (respond: (delivery: Delivery, seen: Recorded[]) => Promise<void> | void) => {
  const seen: Recorded[] = [];
  // several waiters at once: a handler may wait for its own redelivery while the test waits for something else
  const checks = new Set<() => void>();
  const handler = async (delivery: Delivery) => {
    seen.push({ delivery, at: Date.now() });
    for (const check of checks) check();
    await respond(delivery, seen);
  };
  const until = (condition: (seen: Recorded[]) => boolean, what: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), WAIT_MS);
      const check = () => {
        if (!condition(seen)) return;
        clearTimeout(timer);
        checks.delete(check);
        resolve();
      };
      checks.add(check);
      check();
    });
  return { seen, handler, until };
};

/** a promise a test opens by hand, to hold a handler in flight */
export const createGate = () => {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
};

export type WithQueue = (
  t: Test,
  settings: Partial<JobQueueSettings>,
  body: (queue: JobQueue, consume: ConsumeHelper) => Promise<void>,
) => Promise<void>;

/** consume with the consumer stopped at teardown, so a failing test never leaves handlers running */
export type ConsumeHelper = (
  handler: (delivery: Delivery) => Promise<void>,
  options?: Partial<ConsumeOptions>,
) => { stop(): Promise<void> };
