import { performance } from 'node:perf_hooks';

/**
 * How much of its thread a background worker may take (docs/architecture.md#background-workers): the write side's
 * workers share one event loop with the projector, the dispatcher and the crawler, so a worker whose work never runs
 * out (a backlog of deliveries draining) would otherwise take every turn of it. The limit is AIMD on the loop's
 * utilisation, measured over each `everyMs`: above `high` the worker's limit halves (down to `min`), below `low` it
 * grows by `step` (up to `max`). Between the two it holds. The worker asks `limit()` before starting more work.
 */
export interface ThreadShareOptions {
  min: number;
  max: number;
  /** utilisation (0–1) above which the limit halves (default 0.85) */
  high?: number;
  /** utilisation below which it grows (default 0.6) */
  low?: number;
  /** what it grows by (default a tenth of max, at least 1) */
  step?: number;
  /** how often the utilisation is measured (default 100 ms) */
  everyMs?: number;
  /** the loop's utilisation since the last call (tests); default the thread's own, from perf_hooks */
  utilisation?: () => number;
  /** the longest pause between two starts once the limit is at `min` and the thread is still above `high` (50 ms) */
  maxDelayMs?: number;
}

export const createThreadShare = (o: ThreadShareOptions) => {
  const high = o.high ?? 0.85;
  const low = o.low ?? 0.6;
  const step = o.step ?? Math.max(1, Math.floor(o.max / 10));
  const everyMs = o.everyMs ?? 100;
  let last = performance.eventLoopUtilization();
  const utilisation =
    o.utilisation ??
    (() => {
      const now = performance.eventLoopUtilization();
      const u = performance.eventLoopUtilization(now, last).utilization;
      last = now;
      return u;
    });
  const maxDelayMs = o.maxDelayMs ?? 50;
  let limit = o.max;
  /**
   * A limit on work under way bounds nothing when each piece of work is quick (a receiver on the same network answers
   * in a millisecond, and the next attempt starts at once): what the worker costs the thread is then its rate. So once
   * the limit is at its minimum and the thread is still saturated, the worker also waits this long between two starts,
   * doubling while it stays so, halving once the thread has room (docs/architecture.md#background-workers).
   */
  let delay = 0;
  let measured = performance.now();
  /** the utilisation last measured (metrics, tests) */
  let seen = 0;
  const measure = () => {
    const at = performance.now();
    if (at - measured < everyMs) return;
    measured = at;
    seen = utilisation();
    if (seen > high) {
      if (limit === o.min) delay = Math.min(maxDelayMs, Math.max(1, delay * 2));
      limit = Math.max(o.min, Math.floor(limit / 2));
    } else if (seen < low) {
      delay = delay >= 2 ? delay / 2 : 0;
      limit = Math.min(o.max, limit + step);
    }
  };
  return {
    /** the work the worker may have under way now */
    limit(): number {
      measure();
      return limit;
    },
    /** ms the worker waits before it starts more (0: at once) */
    delay(): number {
      measure();
      return delay;
    },
    utilisation: () => seen,
  };
};
export type ThreadShare = ReturnType<typeof createThreadShare>;
