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

/** The request itself is wrong (an unknown engine domain, a 4xx other than 429): retrying cannot help. */
export class CrawlRequestError extends Error {
  readonly code = 'SERP_CRAWL_BAD_REQUEST';
  readonly retireSession = false;
  readonly retryable = false;
  constructor(message: string) {
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

export type CrawlError = CrawlBlockedError | CrawlTransientError | CrawlRequestError | CrawlAbortedError;

export const isCrawlError = (err: unknown): err is CrawlError =>
  err instanceof CrawlBlockedError ||
  err instanceof CrawlTransientError ||
  err instanceof CrawlRequestError ||
  err instanceof CrawlAbortedError;

/** One line for `CrawlFailed.reason` and logs. */
export const describeError = (err: unknown): string =>
  isCrawlError(err)
    ? `${err.code}: ${err.message}`
    : `SERP_CRAWL_UNEXPECTED: ${(err as Error)?.message ?? String(err)}`;

const RETRY = 'its quota was released. Retry later.';

const BLOCK_NAMES: Record<BlockKind, string> = {
  captcha: 'CAPTCHA',
  js_challenge: 'JavaScript challenge',
  consent: 'consent page',
  rate_limited: 'rate limited',
};

/**
 * The `detail` a failed job shows its owner: one fixed line per kind of failure that says what to do (DESIGN.md §4).
 * `CrawlFailed.reason` stays the raw cause for the event history and logs; it can name URLs, hosts and socket errors
 * (a proxy, a mirror origin), so none of its free text is served, only the code, the block kind, an HTTP status, an
 * attempt count, and the caller's own `location`.
 */
export const publicFailureDetail = (reason: string | undefined): string => {
  const text = (reason ?? '').trim();
  const code = /^(SERP_CRAWL_[A-Z_]+):\s*/.exec(text);
  const rest = code ? text.slice(code[0].length) : text;
  switch (code?.[1]) {
    case 'SERP_CRAWL_BLOCKED': {
      const kind = /\((captcha|js_challenge|consent|rate_limited)\b/.exec(rest)?.[1] as BlockKind | undefined;
      return `Google blocked every attempt to fetch this search${kind ? ` (${BLOCK_NAMES[kind]})` : ''}; ${RETRY}`;
    }
    case 'SERP_CRAWL_TRANSIENT': {
      if (/^timed out\b/.test(rest)) return `Google did not answer in time; ${RETRY}`;
      const status = /^Google answered HTTP (5\d\d)\b/.exec(rest)?.[1];
      if (status) return `Google answered with a server error (HTTP ${status}); ${RETRY}`;
      if (/^Google error page\b/.test(rest)) return `Google answered with an error page; ${RETRY}`;
      return `Google could not be reached; ${RETRY}`;
    }
    case 'SERP_CRAWL_BAD_REQUEST': {
      const location = /^unknown location "(.*)"$/.exec(rest)?.[1];
      if (location !== undefined) {
        return `Unknown location ${JSON.stringify(location)}: use a Google geotarget name (serp-api locations import adds them); its quota was released.`;
      }
      if (/^engine_domain\b/.test(rest)) {
        return 'engine_domain is not a Google search domain; its quota was released. Use one such as google.com.';
      }
      const status = /^Google answered HTTP (4\d\d)\b/.exec(rest)?.[1];
      if (status) return `Google refused this search (HTTP ${status}); its quota was released. Check its parameters.`;
      return 'Google cannot answer this search as asked; its quota was released. Check its parameters.';
    }
    case 'SERP_CRAWL_UNEXPECTED':
      return `The search failed on an internal error; ${RETRY}`;
  }
  const attempts = /^gave up after (\d+) attempts?$/.exec(text)?.[1];
  if (attempts) return `The search failed ${attempts} times in a row; ${RETRY}`;
  return `The search could not be completed; ${RETRY}`;
};
