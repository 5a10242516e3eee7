import type { RecordedEvent, Subscription } from '../../ports/eventStore.js';

export interface CatchUpSubscriptionOptions {
  /** checkpoint: the last global position the subscriber has already processed (0 = from the start) */
  fromPosition: number;
  handler: (events: RecordedEvent[]) => Promise<void> | void;
  /** the next batch of events after `position` in global order, empty when there is none yet */
  readAfter: (position: number) => Promise<RecordedEvent[]>;
  /** registers a callback fired whenever this process appended; returns the unregister function */
  onAppended: (wake: () => void) => () => void;
  /** re-read at least this often, to see appends made by other processes that cannot wake us */
  pollIntervalMs: number;
  /** a read or the handler failed; the same batch is retried after `pollIntervalMs` */
  onError: (error: unknown) => void;
  /**
   * the most events `readAfter` answers: a batch shorter than this reached the end of the log as it was read, so the
   * subscription waits for the next append (or poll) instead of reading again at once to find nothing. An append
   * signalled while the handler ran still skips the wait.
   */
  batchSize?: number;
}

/**
 * Catch-up then live, shared by the adapters that read by global position.
 *
 * Invariants: one handler call at a time; batches in global order with no gap and no repeat, except that a batch
 * whose handler threw is delivered again (at-least-once, the checkpoint only moves after the handler resolved).
 * Timers are unref'd: a subscription alone never keeps the process alive.
 */
export const startCatchUpSubscription = (options: CatchUpSubscriptionOptions): Subscription => {
  let checkpoint = options.fromPosition;
  let stopped = false;
  // An append signal that arrives while we read or run the handler must not be lost, or a live event would wait for
  // the next poll: remember it and skip the next sleep.
  let signalled = false;
  let wakeSleeper: (() => void) | undefined;

  const unregister = options.onAppended(() => {
    signalled = true;
    wakeSleeper?.();
  });

  const sleep = (ms: number, wakeOnAppend: boolean) =>
    new Promise<void>((resolve) => {
      if (stopped || (wakeOnAppend && signalled)) return resolve();
      const done = () => {
        clearTimeout(timer);
        wakeSleeper = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      wakeSleeper = wakeOnAppend ? done : () => stopped && done();
    });

  const loop = (async () => {
    while (!stopped) {
      signalled = false;
      try {
        const batch = await options.readAfter(checkpoint);
        if (stopped) break;
        if (batch.length > 0) {
          await options.handler(batch);
          checkpoint = batch[batch.length - 1].globalPosition;
          if (options.batchSize === undefined || batch.length >= options.batchSize) continue;
        }
      } catch (error) {
        if (stopped) break;
        options.onError(error);
        await sleep(options.pollIntervalMs, false);
        continue;
      }
      await sleep(options.pollIntervalMs, true);
    }
  })();

  return {
    async stop() {
      stopped = true;
      unregister();
      wakeSleeper?.();
      await loop;
    },
  };
};

/** "this process appended": what wakes the catch-up subscriptions of an adapter at once */
export const createAppendSignal = () => {
  const listeners = new Set<() => void>();
  return {
    notify() {
      for (const wake of listeners) wake();
    },
    /** the `onAppended` option of startCatchUpSubscription */
    onAppended(wake: () => void) {
      listeners.add(wake);
      return () => listeners.delete(wake);
    },
    clear() {
      listeners.clear();
    },
  };
};

/** the appends still in flight, so that close() can wait for them ("close › waits for appends still pending") */
export const createPendingTracker = () => {
  const pending = new Set<Promise<unknown>>();
  return {
    track<T>(p: Promise<T>) {
      pending.add(p);
      void p.then(
        () => pending.delete(p),
        () => pending.delete(p),
      );
      return p;
    },
    settled: () => Promise.allSettled([...pending]),
  };
};
