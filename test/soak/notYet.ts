import type { INVARIANTS } from './invariants.js';

/**
 * The invariants the three-minute soaks of CI do not hold yet (docs/benchmarks.md#the-soak), each with why: their
 * assertions run and print their figures, as tap todos, listed with the same reasons in test/skips.json, so a run
 * that meets one says so and one that breaks another still fails. `npm run soak` holds every invariant and exits 1
 * on any of them. The embedded soak holds every invariant; the cluster
 * holds reads' p99 in one quiet run of three.
 */
export const NOT_YET: Record<'embedded' | 'cluster', Partial<Record<(typeof INVARIANTS)[number], string>>> = {
  embedded: {},
  cluster: {
    "reads' p99 within 2x idle":
      'alone on a quiet machine 1.60x (24.6 ms against 15.3 ms idle) then 3.25x (16.5 ms against 5.1 ms idle) and 4.00x (20.6 ms against 5.1 ms) in three runs of the same code (2026-12-07, the full run of 2026-12-08 and the file alone after it): under the soak its p99 is 16-25 ms, while the idle baseline moves from 5 to 15 ms between runs; a slow read spends under 1 ms in the server (0.6 ms median since the server took it), the read ceiling no longer waits on NATS and the api projects on a thread of its own; with other work on the machine 5.02x and 11.39x',
  },
};
