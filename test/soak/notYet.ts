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
      "not measured alone yet: on a shared two-core machine the host's load decides it, 1.45x (199.0 ms against 137.3 ms idle) and 4.78x (215.9 against 45.2 ms) in two runs of the same code with some task waiting for a core 98-99 % of the time; a slow result read is a stored answer that spends 0.1 ms in its handler (its time is the event loops waiting for a core), and a usage read now waits only for its own key's appends to be projected on the pipeline thread (nice 10): 1 and 9 slow usage reads, against 38 of 91 when it waited for every key's",
  },
  cluster: {
    "reads' p99 within 2x idle":
      "not measured alone yet: nine processes on two cores shared with other work, 1.58x (587.6 ms against 371.6 ms idle) with some task waiting for a core 97 % of the time, 3.48x and 1.73x in earlier loaded runs; its slow result reads are stored answers (0.1 ms in the handler) but for an api's first read of a result the other api stored (render 30 ms, brotli 99 ms on libuv's pool), and each api's own event loop projects the whole log (6.6 s of its CPU over the faults)",
  },
};
