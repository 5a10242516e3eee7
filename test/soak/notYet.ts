import type { INVARIANTS } from './invariants.js';

/**
 * The invariants the three-minute soaks of CI do not hold yet (docs/benchmarks.md#the-soak), each with why: their
 * assertions run and print their figures, as tap todos, listed with the same reasons in test/skips.json, so a run
 * that meets one says so and one that breaks another still fails. `npm run soak` holds every invariant and exits 1
 * on any of them. Emptying this list is the work left.
 */
export const NOT_YET: Record<'embedded' | 'cluster', Partial<Record<(typeof INVARIANTS)[number], string>>> = {
  embedded: {
    "reads' p99 within 2x idle":
      "the host's own load decides it on a shared two-core machine: 2.22x (108.5 ms against 48.8 ms idle) with other work holding the cores 95 % of the time, 1.94x in an earlier run alone; result reads no longer wait past 15 ms for the pipeline thread, but a usage read still waits until the process's own writes are projected on that thread (nice 10)",
  },
  cluster: {
    "reads' p99 within 2x idle":
      "nine processes on two cores: 3.48x (324.6 ms against 93.2 ms idle) with some task waiting for a core 96 % of the fault phase (82 % while idle was measured); the api's own event loop projects the whole log (7.0 s of its CPU in 150 s); 2.86x-3.34x in runs alone before the other roles ran at nice 10",
  },
};
