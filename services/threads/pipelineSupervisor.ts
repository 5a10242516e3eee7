import { type PipelineThread, startPipelineThread } from './pipelineThread.js';
import { superviseThread, THREAD_EXIT } from './supervisor.js';

/**
 * Why the process stops when its pipeline thread cannot be kept running, and the exit code that says which
 * (docs/operations.md#exit-codes): the codes of every supervised thread (supervisor.ts).
 */
export const PIPELINE_EXIT = THREAD_EXIT;
export { isDiskFull, RESTART_BOUND } from './supervisor.js';

type StartOptions = Parameters<typeof startPipelineThread>[0];

/**
 * The pipeline thread, started again when it fails (docs/architecture.md#when-a-thread-fails), as supervisor.ts
 * supervises a thread. A new thread starts as a process restart would: it opens its stores, its projector catches up
 * from the read models' checkpoint and its dispatcher enqueues again the jobs the log says are waiting or crawling, so
 * the crawls the failed thread held are crawled again. What the main thread asked the failed thread (a render, queue
 * stats, a scrape) was answered with an error when it ended; a wait for a projected position goes on with the new
 * thread.
 */
export const startSupervisedPipeline = (
  options: Omit<StartOptions, 'onFailed' | 'projectedAt'> & {
    /** the position the read models include now (their checkpoint): where a new thread's projector starts */
    projectedAt: () => number;
    /** stop the process: the line for stderr and the exit code */
    exit: (code: number, line: string) => void;
  },
): PipelineThread => {
  const supervised = superviseThread<PipelineThread>({
    kind: 'pipeline',
    exit: options.exit,
    start: (again, onFailed) => {
      // a fault injected into the pipeline thread (SERP_CHAOS_FAULTS) goes to the first thread only, unless `:each`
      const chaosFaults = again
        ? options.setup.config.chaosFaults.filter((f) => !/^pipeline:\d+(:disk-full)?$/.test(f))
        : options.setup.config.chaosFaults;
      return startPipelineThread({
        ...options,
        setup: { ...options.setup, config: { ...options.setup.config, chaosFaults } },
        projectedAt: options.projectedAt(),
        onFailed,
      });
    },
  });
  const current = supervised.current;
  return {
    ready: supervised.first.ready,
    projector: supervised.projector,
    queueStats: () => current().queueStats(),
    metricsText: () => current().metricsText(),
    renderElsewhere: (...args) => current().renderElsewhere(...args),
    appended: (position) => current().appended(position),
    close: supervised.close,
  };
};
