import { setFlagsFromString } from 'node:v8';

/**
 * Bounds how far V8 grows a serving process's heap past what its last full collection kept
 * (docs/decisions.md#the-write-side-on-a-thread-of-its-own). V8 sizes the old generation by a factor it derives from
 * the heap's ceiling: with Node's default ceiling on a machine of this size that factor reaches 4, and the crawler's
 * results (promoted while their search runs, garbage once it is stored) made the main heap reach ~300 MB with ~70 MB
 * live. The flag is read at each full collection, so setting it when `serve` starts takes effect from the first one
 * (Node documents setting V8 flags at run time, with care: this one only changes when the next collection is due). 50%
 * kept the peak at ~135 MB with no loss of crawl throughput in `test/bench/pipeline.ts`; 0 leaves V8's own heuristic.
 */
export const boundHeapGrowth = (percent: number): void => {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
};
