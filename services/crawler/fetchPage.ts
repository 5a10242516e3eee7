import type { ParsedSerp } from '../../contracts/result.js';
import type { Device } from '../../contracts/search.js';
import { rawChunkHead } from '../../parser/pages.js';
import { type CrawlSession, type FetchedPage, type Fetcher, MAX_PAGE_BYTES } from '../ports/fetcher.js';
import type { PackedPage } from '../ports/pageParser.js';
import { MAX_PAGE_TAGS, type PageParser, ParseTimeoutError } from '../ports/pageParser.js';
import type { CostMeter } from './cost.js';
import {
  CrawlAbortedError,
  CrawlBlockedError,
  type CrawlError,
  CrawlRequestError,
  CrawlTransientError,
  isCrawlError,
} from './errors.js';
import { inlineParser } from './readPage.js';
import type { RequestShare, SessionPool } from './sessions.js';
import { sleep } from './sleep.js';

/** Per-page retry limits. Defaults suit live Google; tests shrink the waits. */
export interface PageLimits {
  /** tries per page, on as many sessions as blocks require (default 4) */
  maxAttemptsPerPage: number;
  /** one fetch, including the browser's render wait (default 30,000 ms) */
  pageTimeoutMs: number;
  /** first back-off after a failure; doubles per attempt, with full jitter (default 1,000 ms) */
  backoffBaseMs: number;
  backoffMaxMs: number;
}

/** A result page the crawl took: what was fetched (its bytes are in `raw`, not in `fetched`), and what it says. */
export interface KeptPage {
  start: number;
  fetched: Omit<FetchedPage, 'body'>;
  serp: ParsedSerp;
  fetcher: string;
  /** the route it came through (`proxy-N` or `direct`) */
  route: string;
  /** its part of the job's raw HTML, until the crawl packs it */
  raw?: PackedPage;
}

export interface PageJob {
  url: string;
  start: number;
  /** the crawl's first page: its raw chunk has no separator before its marker */
  first: boolean;
  device: Device;
  captureAio: boolean;
  /** which fetcher serves this page: the crawler decides from SERP_FETCHER and capture_aio */
  fetcher: Fetcher;
  signal?: AbortSignal;
  heartbeat: () => void;
  /** counts every block met, retried or not */
  onBlock: (err: CrawlBlockedError) => void;
  /** where pages are parsed (default: on this thread) */
  parser?: PageParser;
  /** counts the Google requests this page costs */
  meter?: CostMeter;
  /** whose request it is: the session pool's fair queue serves it in its lane, key and share (docs/fleet.md) */
  share?: RequestShare;
  /** a route took the request: it goes to Google now (the crawl's first one ends its wait in the queue) */
  onSent?: () => void;
  /** routes not to take it through: those Google placed it elsewhere through (placement.ts) */
  avoid?: readonly string[];
  /** the route to take it through when it is not cooling down (a route set aside, tried again: placement.ts) */
  prefer?: string;
}

/**
 * The largest page the crawler reads (the fetchers stop reading there, ports/fetcher.ts). A page past it is not parsed
 * (its tree could outgrow a parse thread's heap, `PARSE_THREAD_LIMITS`, and a thread that runs out can end the process;
 * so can denser markup in fewer bytes, which `MAX_PAGE_TAGS` catches) and the search fails at once: another try gets
 * the same page.
 */
export { MAX_PAGE_BYTES };

/**
 * Classifies what came back before parsing: status and final URL catch the blocks the body cannot show (a 429 with
 * an empty body, a redirect to /sorry/), then the parser's page classification catches the rest.
 */
const judge = async (
  page: FetchedPage,
  job: PageJob,
  parser: PageParser,
): Promise<{ serp: ParsedSerp; raw: PackedPage }> => {
  const finalPath = safePath(page.finalUrl);
  if (finalPath.startsWith('/sorry/')) throw new CrawlBlockedError('captcha', page.finalUrl, page.status);
  if (page.status === 429) throw new CrawlBlockedError('rate_limited', page.finalUrl, page.status);
  if (page.status >= 300 && page.status < 400) throw redirected(page);
  if (page.status >= 500) {
    throw new CrawlTransientError('server_error', page.finalUrl, `Google answered HTTP ${page.status}`, page.status);
  }
  if (page.status >= 400) {
    throw new CrawlRequestError(`Google answered HTTP ${page.status} for ${page.url}`, 'http_status', page.status);
  }
  if (page.overLimit || page.body.byteLength > MAX_PAGE_BYTES) {
    throw new CrawlRequestError(
      page.overLimit
        ? `Google's page at ${page.finalUrl} is over the ${MAX_PAGE_BYTES} bytes the crawler reads: the fetcher stopped reading it there`
        : `Google's page at ${page.finalUrl} is ${page.body.byteLength} bytes, over the ${MAX_PAGE_BYTES} the crawler reads`,
      'page_too_large',
      page.status,
    );
  }
  // the marker names the page by its path and query: the origin (SERP_GOOGLE_ORIGIN, a mirror) is the operator's
  const head = rawChunkHead({ start: job.start, url: pathOf(page.url), fetchedAt: page.fetchedAt }, job.first);
  const read = await parser
    .read(
      page.body,
      {
        captureAio: job.captureAio,
        start: job.start,
        device: job.device,
        status: page.status,
        finalUrl: page.finalUrl,
      },
      head,
      job.signal,
    )
    .catch((err: unknown) => {
      // another try would get the same page: the search fails (its quota released), the crawler goes on
      if (err instanceof ParseTimeoutError) {
        throw new CrawlRequestError(
          `Google's page at ${page.finalUrl} did not parse within ${err.timeoutMs} ms`,
          'parse_timeout',
          page.status,
        );
      }
      throw err;
    });
  if (read.raw) return { serp: read.outcome.serp, raw: read.raw };
  const { outcome } = read;
  if (outcome.kind === 'too_large') {
    throw new CrawlRequestError(
      `Google's page at ${page.finalUrl} holds more than ${MAX_PAGE_TAGS} tags, more than any result page`,
      'page_too_large',
      page.status,
    );
  }
  if (outcome.kind === 'error') {
    throw new CrawlTransientError('error_page', page.finalUrl, `Google error page: ${outcome.detail}`, page.status);
  }
  throw new CrawlBlockedError(outcome.kind, page.finalUrl, page.status);
};

/**
 * A redirect the fetcher did not follow (to another origin than the Google it asked): Google's consent page is a
 * block like the others; anything else fails the page, and the crawler never fetches it.
 */
const redirected = (page: FetchedPage): CrawlError => {
  const to = page.redirectedTo ?? '';
  let host = '';
  try {
    host = new URL(to).hostname;
  } catch {
    // no usable Location
  }
  if (/^consent\.google\.[a-z.]+$/i.test(host)) return new CrawlBlockedError('consent', page.finalUrl, page.status);
  return new CrawlRequestError(
    `Google's answer at ${page.finalUrl} redirected to ${host || 'an unreadable location'}, which the crawler does not follow`,
    'redirect',
    page.status,
  );
};

/** `/search?q=…` of a URL, without its origin */
const pathOf = (url: string): string => {
  try {
    const u = new URL(url);
    return `${u.pathname}${u.search}`;
  } catch {
    return '';
  }
};

const safePath = (url: string): string => {
  try {
    return new URL(url).pathname;
  } catch {
    return '';
  }
};

/** Maps what a fetcher threw (got, playwright, abort) onto the crawler's typed errors. */
const asCrawlError = (err: unknown, url: string, signal?: AbortSignal): CrawlError => {
  if (signal?.aborted) return new CrawlAbortedError();
  if (isCrawlError(err)) return err;
  const e = err as { name?: string; code?: string; message?: string };
  if (e?.name === 'TimeoutError' || e?.code === 'ETIMEDOUT') {
    return new CrawlTransientError('timeout', url, `timed out fetching ${url}`);
  }
  return new CrawlTransientError(
    'network',
    url,
    `fetch failed: ${e?.code ?? e?.name ?? 'error'}: ${e?.message ?? err}`,
  );
};

export const backoffDelay = (attempt: number, limits: PageLimits): number =>
  Math.round(Math.random() * Math.min(limits.backoffMaxMs, limits.backoffBaseMs * 2 ** (attempt - 1)));

/**
 * One results page, retried by the kind of failure (Crawlee's rule): a block retires the session and the next try
 * takes another; a transient failure keeps the session; a bad request or an abort ends at once. Resolves only with a
 * parsed SERP, so a block page can never become a result; rejects with the last typed error.
 */
export const fetchPageWithRetries = async (
  job: PageJob,
  sessions: SessionPool,
  limits: PageLimits,
): Promise<KeptPage> => {
  let last: CrawlError | undefined;
  for (let attempt = 1; attempt <= limits.maxAttemptsPerPage; attempt++) {
    job.heartbeat();
    let session: CrawlSession | undefined;
    /** the requests this attempt made, once its fetch is over (a fetch that threw made one) */
    let spent: { requests: number; bytes: number } | undefined;
    let wasBlocked = false;
    try {
      session = await sessions.acquire(
        job.device,
        job.signal,
        job.meter?.opened,
        job.share || job.avoid || job.prefer
          ? {
              ...(job.share ? { share: job.share } : {}),
              ...(job.avoid ? { avoid: job.avoid } : {}),
              ...(job.prefer ? { prefer: job.prefer } : {}),
            }
          : undefined,
      );
      job.onSent?.();
      spent = { requests: 1, bytes: 0 };
      const fetched = await job.fetcher.fetch({
        url: job.url,
        device: job.device,
        session,
        captureAio: job.captureAio,
        timeoutMs: limits.pageTimeoutMs,
        signal: job.signal,
      });
      const { body: _moved, ...meta } = fetched;
      spent = { requests: fetched.requests ?? 1, bytes: fetched.bytes ?? fetched.body.byteLength };
      const { serp, raw } = await judge(fetched, job, job.parser ?? inlineParser);
      sessions.succeeded(session, fetched.cookies);
      return {
        start: job.start,
        fetched: meta,
        serp,
        fetcher: job.fetcher.name,
        route: session.route ?? 'direct',
        raw,
      };
    } catch (err) {
      last = asCrawlError(err, job.url, job.signal);
      if (last instanceof CrawlBlockedError) {
        wasBlocked = true;
        job.onBlock(last);
        // a ban parks the route; a challenge (passed by the browser that opens sessions) or the consent page only
        // ends the session, and the retry opens a new one (sessions.ts)
        if (session) sessions.blocked(session, last.kind);
      }
      if (!last.retryable) throw last;
    } finally {
      if (session && spent) {
        job.meter?.fetched({
          route: session.route,
          fetcher: job.fetcher.name,
          ...spent,
          blocked: wasBlocked,
        });
      }
      if (session) sessions.release(session, spent?.requests ?? 1);
    }
    if (attempt < limits.maxAttemptsPerPage) {
      job.heartbeat();
      await sleep(backoffDelay(attempt, limits), job.signal);
    }
  }
  throw last ?? new CrawlTransientError('network', job.url, 'no attempt made');
};
