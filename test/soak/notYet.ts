import type { INVARIANTS } from './invariants.js';

/**
 * The invariants the three-minute soaks of CI do not hold yet (docs/benchmarks.md#the-soak), each with why: their
 * assertions run and print their figures, as tap todos, listed with the same reasons in test/skips.json, so a run
 * that meets one says so and one that breaks another still fails. `npm run soak` holds every invariant and exits 1
 * on any of them. Emptying this list is the work left.
 */
export const NOT_YET: Record<'embedded' | 'cluster', Partial<Record<(typeof INVARIANTS)[number], string>>> = {
  embedded: {
    'RSS at the end within 15 % of after warm-up':
      'the warm-up of a 3-minute soak (27 s) ends before the stored answers (a cache bounded at 64 MB) have filled: 388 -> 459 MB (+18.3 %) in a run alone, most of it that cache',
    "reads' p99 within 2x idle": 'reads p99 1.94x idle in a run alone on two cores, at the edge: not met reliably',
  },
  cluster: {
    "reads' p99 within 2x idle":
      'nine processes on two cores: reads p99 2.8x-3.3x idle in runs alone (the api processes are not favoured over the crawlers)',
  },
};
