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
      "not measured alone yet: on a shared two-core machine the host's load decides it, 1.45x, 4.78x and 2.14x (169.8 ms against 79.2 ms idle) in three runs of the same code with some task waiting for a core 85-98 % of the time; a slow result read is a stored answer that spends 0.3 ms between the server taking it and answering it (its 213 ms median is the event loops waiting for a core), and a usage read now waits only for its own key's appends to be projected on the pipeline thread (nice 10): 1, 9 and 5 slow usage reads, against 38 of 91 when it waited for every key's",
  },
  cluster: {
    "reads' p99 within 2x idle":
      "not measured alone yet: nine processes on two cores shared with other work, 1.58x, 2.00x and 2.25x (180.1 ms against 80.0 ms idle) with some task waiting for a core 94-97 % of the time; its slow reads spend 0.1 ms in their handler and most of their time before it, counting the read against the key's read ceiling with a compare-and-set on NATS KV (85.6 ms median for slow result reads, 162 ms for usage, 2.9 ms idle), which is not changed yet; each api's event loop also projects the whole log (6.6-8.4 s of its CPU over the faults)",
  },
};
