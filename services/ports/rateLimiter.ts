/**
 * Per-key request ceilings in fixed one-minute windows (docs/design.md#two-modes-one-code-base, docs/api.md#limits).
 * Embedded mode counts in memory; a distributed api fleet shares the counts (NATS KV with compare-and-set), so every
 * adapter is asynchronous. Every adapter passes test/conformance/rateLimiterSuite.ts.
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
  close(): Promise<void>;
}
