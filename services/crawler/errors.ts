import type { CrawlFailure } from '../../contracts/events.js';

/**
 * What can go wrong fetching one Google page. The kind decides the retry (Crawlee's rule): a block retires the session
 * and retries on another, a transient failure backs off and retries, a bad request is never retried.
 */
export type BlockKind = 'captcha' | 'js_challenge' | 'consent' | 'rate_limited';

export class CrawlBlockedError extends Error {
  readonly code = 'SERP_CRAWL_BLOCKED';
  readonly retireSession = true;
  readonly retryable = true;
  constructor(
    readonly kind: BlockKind,
    readonly url: string,
    readonly status: number,
  ) {
    super(`blocked by Google (${kind}, HTTP ${status}) at ${url}`);
    this.name = 'CrawlBlockedError';
  }
}

/** 5xx, timeouts, connection resets, pages the parser calls `error`: worth another try, on the same session. */
export class CrawlTransientError extends Error {
  readonly code = 'SERP_CRAWL_TRANSIENT';
  readonly retireSession = false;
  readonly retryable = true;
  constructor(
    readonly kind: 'server_error' | 'timeout' | 'network' | 'error_page',
    readonly url: string,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'CrawlTransientError';
  }
}

export type RequestErrorKind = 'unknown_location' | 'engine_domain' | 'http_status' | 'page_too_large' | 'invalid';

/** The request itself is wrong (an unknown engine domain, a 4xx other than 429): retrying cannot help. */
export class CrawlRequestError extends Error {
  readonly code = 'SERP_CRAWL_BAD_REQUEST';
  readonly retireSession = false;
  readonly retryable = false;
  constructor(
    message: string,
    readonly kind: RequestErrorKind = 'invalid',
    readonly status?: number,
  ) {
    super(message);
    this.name = 'CrawlRequestError';
  }
}

/** The job was cancelled (shutdown drain, lost lease): stop at once, keep nothing further. */
export class CrawlAbortedError extends Error {
  readonly code = 'SERP_CRAWL_ABORTED';
  readonly retireSession = false;
  readonly retryable = false;
  constructor() {
    super('crawl aborted');
    this.name = 'CrawlAbortedError';
  }
}

/**
 * Every route (proxy) is cooling down after Google blocked it, for longer than a job may wait for one
 * (SERP_NO_ROUTE_WAIT_S): the job ends now, its quota released, rather than send a page to a banned address.
 */
export class CrawlNoRouteError extends Error {
  readonly code = 'SERP_CRAWL_NO_ROUTE';
  readonly kind = 'no_route';
  readonly retireSession = false;
  readonly retryable = false;
  constructor(
    readonly routes: number,
    /** when the first of them is back (ms since the epoch) */
    readonly until: number,
  ) {
    super(
      `every route (${routes}) is cooling down after Google blocked it, the first until ${new Date(until).toISOString()}`,
    );
    this.name = 'CrawlNoRouteError';
  }
}

export type CrawlError =
  | CrawlBlockedError
  | CrawlTransientError
  | CrawlRequestError
  | CrawlAbortedError
  | CrawlNoRouteError;

export const isCrawlError = (err: unknown): err is CrawlError =>
  err instanceof CrawlBlockedError ||
  err instanceof CrawlNoRouteError ||
  err instanceof CrawlTransientError ||
  err instanceof CrawlRequestError ||
  err instanceof CrawlAbortedError;

/** The machine-readable side of `CrawlFailed` (contracts/events.ts `CrawlFailure`). */
export const failureOf = (err: unknown): CrawlFailure => {
  if (err instanceof CrawlBlockedError) return { code: err.code, kind: err.kind, httpStatus: err.status };
  if (err instanceof CrawlTransientError) {
    return { code: err.code, kind: err.kind, ...(err.status !== undefined ? { httpStatus: err.status } : {}) };
  }
  if (err instanceof CrawlRequestError) {
    return { code: err.code, kind: err.kind, ...(err.status !== undefined ? { httpStatus: err.status } : {}) };
  }
  if (err instanceof CrawlNoRouteError) return { code: err.code, kind: err.kind };
  return { code: 'SERP_CRAWL_UNEXPECTED' };
};

/** One line for `CrawlFailed.reason` and logs. */
export const describeError = (err: unknown): string =>
  isCrawlError(err)
    ? `${err.code}: ${err.message}`
    : `SERP_CRAWL_UNEXPECTED: ${(err as Error)?.message ?? String(err)}`;
