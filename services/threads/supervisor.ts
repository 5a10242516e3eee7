import type { Projector } from '../projector/projector.js';
import { reportThreadFault, type ThreadKind } from './threadFaults.js';

/**
 * Why the process stops when a supervised thread (the pipeline thread, a cluster api's projector thread) cannot be kept
 * running, and the exit code that says which (docs/operations.md#exit-codes). Each is a line on stderr too.
 */
export const THREAD_EXIT = {
  /** it failed again and again: RESTART_BOUND failures within its window (EX_SOFTWARE) */
  failing: 70,
  /** a new thread could not start, RESTART_BOUND times within the window: its stores cannot be opened or read
   * (EX_UNAVAILABLE) */
  cannotStart: 69,
  /** the disk is full: another thread would fail the same way (EX_IOERR) */
  diskFull: 74,
} as const;

/** at most this many failures of a supervised thread within `windowMs`; the next one stops the process */
export const RESTART_BOUND = { failures: 5, windowMs: 60_000 };

/** a failure no restart mends: the disk (or SQLite's file) is full */
export const isDiskFull = (message: string): boolean =>
  /\bENOSPC\b|SQLITE_FULL|database or disk is full/i.test(message);

/** what a supervised thread's handle offers: its start, its projector as seen from the main thread, its end */
export interface SupervisedThread {
  /** resolves once the thread is ready; rejects when it could not start */
  ready: Promise<unknown>;
  projector: Projector;
  close(): Promise<void>;
}

/**
 * A thread started again when it fails (docs/architecture.md#when-a-thread-fails): each failure is logged with its
 * cause and counted (`serp_thread_restarts_total{thread}`), the first restart comes at once, then 0.5 s later for each
 * failure in the window, so a fault that lasts a moment can pass. A wait for a projected position goes on with the new
 * thread. The process stops instead, saying why with a code of THREAD_EXIT, when the disk is full or the thread fails
 * RESTART_BOUND times in its window (a thread that cannot even start counts too). A first thread that cannot start
 * fails the service's start (the caller awaits `first.ready`), not this.
 */
export const superviseThread = <T extends SupervisedThread>(options: {
  kind: ThreadKind & ('pipeline' | 'projector');
  /** starts a thread (`again`: in place of one that failed); it calls `onFailed` when it fails after it was ready */
  start: (again: boolean, onFailed: (err: Error) => void) => T;
  /** stop the process: the line for stderr and the exit code */
  exit: (code: number, line: string) => void;
}) => {
  const failures: number[] = [];
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  /** the thread that runs now, or the one that will (a new one while it starts) */
  let current: T;
  /** resolves with the next thread once it is ready; a waiter on the failed one goes on with it */
  let next: Promise<T>;
  let replaced: (thread: T) => void = () => undefined;
  /** a failed thread is not replaced yet (failures while a new one starts wait for the same `next`) */
  let replacing = false;
  const what = `the ${options.kind} thread`;

  const start = (again: boolean): T => {
    current = options.start(again, (err) => failed(err, true));
    return current;
  };

  const failed = (err: Error, started: boolean) => {
    if (stopped) return;
    if (isDiskFull(err.message)) {
      stopped = true;
      return options.exit(THREAD_EXIT.diskFull, `${what} failed: the disk is full (${err.message})`);
    }
    const now = Date.now();
    failures.push(now);
    while (failures.length > 0 && failures[0]! < now - RESTART_BOUND.windowMs) failures.shift();
    if (failures.length >= RESTART_BOUND.failures) {
      stopped = true;
      const within = `${failures.length} times within ${RESTART_BOUND.windowMs / 1000} s`;
      return started
        ? options.exit(THREAD_EXIT.failing, `${what} failed ${within}, last: ${err.message}`)
        : options.exit(THREAD_EXIT.cannotStart, `${what} could not start ${within}: ${err.message}`);
    }
    reportThreadFault(options.kind, err.message);
    if (!replacing) {
      replacing = true;
      next = new Promise<T>((resolve) => {
        replaced = resolve;
      });
    }
    timer = setTimeout(
      () => {
        timer = undefined;
        if (stopped) return;
        const thread = start(true);
        thread.ready.then(
          () => {
            replacing = false;
            replaced(thread);
          },
          (why: Error) => failed(why, false),
        );
      },
      500 * (failures.length - 1),
    );
  };

  const first = start(false);
  next = first.ready.then(
    () => first,
    () => first,
  );

  const projector: Projector = {
    start: async () => {
      await first.ready;
    },
    waitFor: async (target) => {
      for (;;) {
        const thread = current;
        try {
          return await thread.projector.waitFor(target);
        } catch (err) {
          // the thread ended: wait for the one that replaces it, unless none will
          if (stopped || (await next) === thread) throw err;
        }
      }
    },
    stop: async () => undefined,
  };

  return {
    first,
    /** the thread that runs now (or the one starting in place of a failed one) */
    current: () => current,
    /** the projector across restarts: a wait for a position goes on with the next thread */
    projector,
    close: async () => {
      stopped = true;
      clearTimeout(timer);
      // a wait for a projected position that was waiting for a new thread ends (with its error)
      replaced(current);
      await current.close();
    },
  };
};
