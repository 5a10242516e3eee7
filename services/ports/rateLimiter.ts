/**
 * Per-key request ceilings in fixed one-minute windows (docs/design.md#two-modes-one-code-base, docs/api.md#limits).
 * Embedded mode counts in memory; a distributed api fleet shares the counts (NATS KV with compare-and-set), so an
 * exact count is asynchronous; `hitNow` is the synchronous, locally decided one. Every adapter passes test/conformance/rateLimiterSuite.ts.
 */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** requests left in the current window after this one */
  remaining: number;
  /** seconds until the window resets: what `Retry-After` and `RateLimit-Reset` say */
  resetSeconds: number;
}

export interface RateLimiter {
  /** counts one request against `bucket` when it is under `limit` this minute, and says whether it was allowed */
  hit(bucket: string, limit: number): Promise<RateDecision>;
  /**
   * The same count, decided from what this process knows now, without waiting on a shared store: for ceilings that
   * guard against abuse rather than charge (reads). Exact within one process. Across processes each one shares its
   * count in the background, so together they may admit more than `limit` by what the others admitted since they
   * last shared (docs/api.md#limits).
   */
  hitNow(bucket: string, limit: number): RateDecision;
  close(): Promise<void>;
}
