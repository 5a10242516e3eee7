import type { Config } from '../config/config.js';
import type { DistributedConfig } from '../config/distributed.js';
import type { Projector } from '../projector/projector.js';
import { startThread, whenThreadEnds } from './boot.js';
import { createProjectedPosition } from './projectedPosition.js';
import { superviseThread } from './supervisor.js';
import { reportThreadFault, type ThreadKind } from './threadFaults.js';

/** What a cluster api's projector thread is started with (structured-cloned). */
export interface ProjectorThreadSetup {
  config: Config;
  dist: DistributedConfig;
}

export type ToProjector = { type: 'close' };

export type FromProjector =
  /** caught up with the head the log had when it started; the read models hold `position` */
  | { type: 'ready'; position: number }
  /** it could not open its stores or catch up */
  | { type: 'failed'; error: { message: string } }
  | { type: 'projected'; position: number }
  /** a thread of this thread's failed and was started again: counted on the main thread */
  | { type: 'threadFault'; thread: ThreadKind; cause: string };

/** the projector thread's handle: its start, its projector as seen from here, its end */
export interface ProjectorThread {
  ready: Promise<void>;
  projector: Projector;
  close(): Promise<void>;
}

/** how long `close()` waits for the thread to stop its subscription and close its stores before stopping it */
const CLOSE_TIMEOUT_MS = 15_000;

/**
 * The read models' projector of a distributed api process on a thread of its own (docs/distributed.md#roles): it
 * hydrates results from the object store, folds them and commits to the SQLite read models the HTTP thread reads,
 * over connections of its own (NATS, the event store, the file), at nice 10. The HTTP thread's read-model store sees
 * its commits through SQLite's `data_version` (adapters/readModel/sqlite.ts), as the embedded HTTP thread sees the
 * pipeline thread's. What crosses is the projected position, told once for many (`waitFor` here resolves on it).
 */
export const startProjectorThread = (options: {
  setup: ProjectorThreadSetup;
  /** the position the read models include at start (their checkpoint) */
  projectedAt: number;
  /** the thread failed after it was ready: nothing is projected any more */
  onFailed: (err: Error) => void;
}): ProjectorThread => {
  const worker = startThread('runtime/projectorWorker', { workerData: options.setup });
  const projected = createProjectedPosition(options.projectedAt);
  let isReady = false;
  let closing = false;
  let markReady: () => void = () => undefined;
  let failStart: (err: Error) => void = () => undefined;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failStart = reject;
  });
  worker.on('message', (m: FromProjector) => {
    switch (m.type) {
      case 'ready':
        isReady = true;
        projected.reached(m.position);
        markReady();
        return;
      case 'projected':
        projected.reached(m.position);
        return;
      case 'failed':
        if (!isReady) failStart(new Error(m.error.message));
        void worker.terminate();
        return;
      case 'threadFault':
        reportThreadFault(m.thread, m.cause);
        return;
      default:
        return;
    }
  });
  let ended = false;
  const exited = whenThreadEnds(worker, 'projector thread', (why) => {
    ended = true;
    projected.end(why);
    if (!isReady) failStart(why);
    else if (!closing) options.onFailed(why);
  });
  return {
    ready,
    projector: {
      ...projected.projector,
      start: () => ready,
    },
    async close() {
      closing = true;
      if (ended) return;
      worker.postMessage({ type: 'close' } satisfies ToProjector);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        exited,
        new Promise<void>((resolve) => {
          timer = setTimeout(() => void worker.terminate().then(() => resolve()), CLOSE_TIMEOUT_MS);
        }),
      ]);
      clearTimeout(timer);
    },
  };
};

/**
 * The projector thread, started again when it fails (supervisor.ts, docs/architecture.md#when-a-thread-fails): a new
 * thread catches up from the read models' checkpoint; a wait for a projected position goes on with it. As a Projector:
 * `start` resolves once the first thread has caught up, `stop` ends the thread.
 */
export const startSupervisedProjector = (options: {
  setup: ProjectorThreadSetup;
  /** the position the read models include now (their checkpoint): where a new thread's projector starts */
  projectedAt: () => number;
  /** stop the process: the line for stderr and the exit code */
  exit: (code: number, line: string) => void;
}): Projector => {
  const supervised = superviseThread<ProjectorThread>({
    kind: 'projector',
    exit: options.exit,
    start: (again, onFailed) => {
      // a fault injected into the projector thread (SERP_CHAOS_FAULTS) goes to the first thread only, unless `:each`
      const chaosFaults = again
        ? options.setup.config.chaosFaults.filter((f) => !/^projector:\d+$/.test(f))
        : options.setup.config.chaosFaults;
      return startProjectorThread({
        setup: { ...options.setup, config: { ...options.setup.config, chaosFaults } },
        projectedAt: options.projectedAt(),
        onFailed,
      });
    },
  });
  return {
    start: () => supervised.first.ready,
    waitFor: supervised.projector.waitFor,
    stop: supervised.close,
  };
};
