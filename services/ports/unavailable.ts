/**
 * A store (or the NATS cluster under it) could not be reached or did not answer in time: nothing is known to be
 * written. The api answers 503 with Retry-After; a crawler's delivery is retried. Embedded mode never throws it.
 */
export class StoreUnavailableError extends Error {
  readonly code = 'SERP_STORE_UNAVAILABLE';
  constructor(what: string, cause: unknown) {
    super(`${what} unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'StoreUnavailableError';
  }
}
