import type { RateDecision, RateLimiter } from '../../ports/rateLimiter.js';

/** Fixed one-minute windows per bucket, in this process's memory (embedded mode: one api process). */
export const createMemoryRateLimiter = (now: () => number = Date.now): RateLimiter => {
  const windows = new Map<string, { window: number; count: number }>();
  let lastSweep = 0;
  const hitNow = (bucket: string, limit: number): RateDecision => {
    const t = now();
    const window = Math.floor(t / 60_000);
    if (window !== lastSweep) {
      for (const [k, v] of windows) if (v.window < window) windows.delete(k);
      lastSweep = window;
    }
    const w = windows.get(bucket);
    const entry = w && w.window === window ? w : { window, count: 0 };
    const resetSeconds = Math.max(1, Math.ceil(((window + 1) * 60_000 - t) / 1000));
    if (entry.count >= limit) return { allowed: false, limit, remaining: 0, resetSeconds };
    entry.count++;
    windows.set(bucket, entry);
    return { allowed: true, limit, remaining: limit - entry.count, resetSeconds };
  };
  return {
    // one process holds every count, so the exact count is the local one
    hit: async (bucket, limit) => hitNow(bucket, limit),
    hitNow,
    async close() {
      windows.clear();
    },
  };
};
