import type { Projector } from '../projector/projector.js';
import { type PipelineThread, startPipelineThread } from './pipelineThread.js';
import { reportThreadFault } from './threadFaults.js';

/**
 * Why the process stops when its pipeline thread cannot be kept running, and the exit code that says which
 * (docs/operations.md#exit-codes). Each is a line on stderr too.
 */
export const PIPELINE_EXIT = {
  /** it failed again and again: RESTART_BOUND failures within its window (EX_SOFTWARE) */
  failing: 70,
  /** a new thread could not start, RESTART_BOUND times within the window: the data directory's stores cannot be
   * opened or read (EX_UNAVAILABLE) */
  cannotStart: 69,
  /** the disk is full: another thread would fail the same way (EX_IOERR) */
  diskFull: 74,
} as const;

/** at most this many failures of the pipeline thread within `windowMs`; the next one stops the process */
export const RESTART_BOUND = { failures: 5, windowMs: 60_000 };

/** a failure no restart mends: the disk (or SQLite's file) is full */
export const isDiskFull = (message: string): boolean =>
  /\bENOSPC\b|SQLITE_FULL|database or disk is full/i.test(message);

type StartOptions = Parameters<typeof startPipelineThread>[0];

/**
 * The pipeline thread, started again when it fails (docs/architecture.md#when-a-thread-fails). A new thread starts
 * as a process restart would: it opens its stores, its projector catches up from the read models' checkpoint and its
 * dispatcher enqueues again the jobs the log says are waiting or crawling, so the crawls the failed thread held are
 * crawled again. What the main thread asked the failed thread (a render, queue stats, a scrape) was answered with an
 * error when it ended; a wait for a projected position goes on with the new thread. The process stops instead, saying
 * why on stderr with a code of PIPELINE_EXIT, when the disk is full or the thread fails RESTART_BOUND times in its
 * window (a thread that cannot even start counts too).
 */
export const startSupervisedPipeline = (
  options: Omit<StartOptions, 'onFailed' | 'projectedAt'> & {
    /** the position the read models include now (their checkpoint): where a new thread's projector starts */
    projectedAt: () => number;
    /** stop the process: the line for stderr and the exit code */
    exit: (code: number, line: string) => void;
  },
): PipelineThread => {
  const failures: number[] = [];
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  /** the thread that runs now, or the one that will (a new one while it starts) */
  let current: PipelineThread;
  /** resolves with the next thread once it is ready; a waiter on the failed one goes on with it */
  let next: Promise<PipelineThread>;
  let replaced: (thread: PipelineThread) => void = () => undefined;
  /** a failed thread is not replaced yet (failures while a new one starts wait for the same `next`) */
  let replacing = false;

  const start = (setup: StartOptions['setup']): PipelineThread => {
    const thread: PipelineThread = startPipelineThread({
      ...options,
      setup,
      projectedAt: options.projectedAt(),
      onFailed: (err) => failed(err, true),
    });
    current = thread;
    return thread;
  };

  const failed = (err: Error, started: boolean) => {
    if (stopped) return;
    if (isDiskFull(err.message)) {
      stopped = true;
      return options.exit(PIPELINE_EXIT.diskFull, `the pipeline thread failed: the disk is full (${err.message})`);
    }
    const now = Date.now();
    failures.push(now);
    while (failures.length > 0 && failures[0]! < now - RESTART_BOUND.windowMs) failures.shift();
    if (failures.length >= RESTART_BOUND.failures) {
      stopped = true;
      const within = `${failures.length} times within ${RESTART_BOUND.windowMs / 1000} s`;
      return started
        ? options.exit(PIPELINE_EXIT.failing, `the pipeline thread failed ${within}, last: ${err.message}`)
        : options.exit(PIPELINE_EXIT.cannotStart, `the pipeline thread could not start ${within}: ${err.message}`);
    }
    reportThreadFault('pipeline', err.message);
    if (!replacing) {
      replacing = true;
      next = new Promise<PipelineThread>((resolve) => {
        replaced = resolve;
      });
    }
    // the first restart at once; then a little later each time, so a fault that lasts a moment can pass
    timer = setTimeout(
      () => {
        timer = undefined;
        if (stopped) return;
        // a fault injected into the pipeline thread (SERP_CHAOS_FAULTS) goes to the first thread only, unless `:each`
        const chaosFaults = options.setup.config.chaosFaults.filter((f) => !/^pipeline:\d+(:disk-full)?$/.test(f));
        const config = { ...options.setup.config, chaosFaults };
        const thread = start({ ...options.setup, config });
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

  const first = start(options.setup);
  // a first thread that cannot start fails the service's start (embedded.ts awaits `ready`), not this
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
    ready: first.ready,
    projector,
    queueStats: () => current.queueStats(),
    metricsText: () => current.metricsText(),
    renderElsewhere: (...args) => current.renderElsewhere(...args),
    appended: (position) => current.appended(position),
    close: async () => {
      stopped = true;
      clearTimeout(timer);
      // a wait for a projected position that was waiting for a new thread ends (with its error)
      replaced(current);
      await current.close();
    },
  };
};
