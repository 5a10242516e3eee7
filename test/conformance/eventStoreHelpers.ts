import { randomUUID } from 'node:crypto';
import type { EventStore, RecordedEvent } from '../../services/ports/eventStore.js';

/**
 * What an adapter's test file hands the conformance suite. Every call of `connect` opens a new client on the SAME
 * data, which is how the suite simulates a second process and a restart.
 */
export interface EventStoreFixture {
  connect(): Promise<EventStore>;
  /** removes the data once every client of the fixture is closed */
  cleanup(): Promise<void>;
}

/** unique per test, so the suite also runs against a shared server whose log already holds other events */
export const uniqueStream = (prefix: string) => `${prefix}-${randomUUID()}`;

export const events = (n: number, type = 'Happened') => Array.from({ length: n }, (_, i) => ({ type, data: { i } }));

/** generous: a loaded 2-core CI box must not fail these, they only guard against hangs */
export const WAIT_MS = 15_000;

/**
 * A subscription handler that records what it got and lets a test wait for a condition, failing loudly instead of
 * hanging when the condition never comes.
 */
export const createCollector = (filter: (e: RecordedEvent) => boolean = () => true) => {
  const received: RecordedEvent[] = [];
  const batches: RecordedEvent[][] = [];
  let check: (() => void) | undefined;
  const handler = (batch: RecordedEvent[]) => {
    batches.push(batch);
    received.push(...batch.filter(filter));
    check?.();
  };
  const until = (condition: (received: RecordedEvent[]) => boolean, what: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), WAIT_MS);
      check = () => {
        if (!condition(received)) return;
        clearTimeout(timer);
        check = undefined;
        resolve();
      };
      check();
    });
  return { received, batches, handler, until };
};

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
