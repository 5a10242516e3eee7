import type { CrawlFailure } from '../../contracts/events.js';
import type { JobStatusDoc } from '../../projections/jobStatus/jobStatus.js';
import { MAX_PAGE_BYTES } from '../ports/fetcher.js';
import { MAX_PAGE_TAGS } from '../ports/pageParser.js';

const RETRY = 'its quota was released. Retry later.';

const BLOCK_NAMES: Record<string, string> = {
  captcha: 'CAPTCHA',
  js_challenge: 'JavaScript challenge',
  consent: 'consent page',
  rate_limited: 'rate limited',
};

/**
 * The `detail` a failed job shows its owner: one fixed line per kind of failure that says what to do
 * (docs/decisions.md#the-apis-answers). Built from the failure's code and kind, the HTTP status, the attempt count and
 * the caller's own `location`; the raw reason can name URLs, hosts and socket errors (a proxy, a mirror origin), so
 * none of its text is served.
 */
export const failureDetail = (failure: CrawlFailure, location?: string): string => {
  switch (failure.code) {
    case 'SERP_CRAWL_BLOCKED': {
      const name = failure.kind ? BLOCK_NAMES[failure.kind] : undefined;
      return `Google blocked every attempt to fetch this search${name ? ` (${name})` : ''}; ${RETRY}`;
    }
    case 'SERP_CRAWL_TRANSIENT':
      if (failure.kind === 'timeout') return `Google did not answer in time; ${RETRY}`;
      if (failure.kind === 'server_error' && failure.httpStatus) {
        return `Google answered with a server error (HTTP ${failure.httpStatus}); ${RETRY}`;
      }
      if (failure.kind === 'error_page') return `Google answered with an error page; ${RETRY}`;
      return `Google could not be reached; ${RETRY}`;
    case 'SERP_CRAWL_BAD_REQUEST':
      if (failure.kind === 'unknown_location') {
        return `Unknown location ${JSON.stringify(location ?? '')}: give a place as people write it ("Austin, TX"), a canonical name or a criteria id (GET /locations.json?q=… lists them); its quota was released.`;
      }
      if (failure.kind === 'engine_domain') {
        return 'engine_domain is not a Google search domain; its quota was released. Use one such as google.com.';
      }
      if (failure.kind === 'page_too_large') {
        return `Google's page for this search was larger than any result page the crawler reads (over ${MAX_PAGE_BYTES / 2 ** 20} MB or ${MAX_PAGE_TAGS.toLocaleString('en-US')} tags); its quota was released.`;
      }
      if (failure.kind === 'parse_timeout') {
        return "Google's page for this search could not be read in time (it is not a page Google sends); its quota was released.";
      }
      if (failure.kind === 'redirect') {
        return 'The answer to this search redirected away from Google (a proxy or a captive portal in between); its quota was released. Retry later.';
      }
      if (failure.kind === 'http_status' && failure.httpStatus) {
        return `Google refused this search (HTTP ${failure.httpStatus}); its quota was released. Check its parameters.`;
      }
      return 'Google cannot answer this search as asked; its quota was released. Check its parameters.';
    case 'SERP_CRAWL_UNEXPECTED':
      return `The search failed on an internal error; ${RETRY}`;
    case 'SERP_CRAWL_NO_ROUTE':
      return `Google was blocking every proxy the service crawls through, so this search was not sent; ${RETRY.replace('later', 'in a few minutes')}`;
    case 'SERP_CRAWL_EXHAUSTED':
      return failure.attempts
        ? `The search failed ${failure.attempts} times in a row; ${RETRY}`
        : `The search could not be completed; ${RETRY}`;
  }
};

/**
 * Failures recorded before `CrawlFailed` carried its code kept only the reason text (`SERP_CRAWL_…: message`, or
 * "gave up after N attempts"): their code, kind, status and attempts are read back from it. Nothing else of it is used.
 */
export const legacyFailure = (reason: string | undefined): CrawlFailure | undefined => {
  const text = (reason ?? '').trim();
  const attempts = /^gave up after (\d+) attempts?$/.exec(text)?.[1];
  if (attempts) return { code: 'SERP_CRAWL_EXHAUSTED', attempts: Number(attempts) };
  const code = /^(SERP_CRAWL_(?:BLOCKED|TRANSIENT|BAD_REQUEST|UNEXPECTED)):\s*/.exec(text);
  if (!code) return undefined;
  const rest = text.slice(code[0].length);
  switch (code[1]) {
    case 'SERP_CRAWL_BLOCKED': {
      const kind = /\((captcha|js_challenge|consent|rate_limited)\b/.exec(rest)?.[1];
      return { code: 'SERP_CRAWL_BLOCKED', ...(kind ? { kind } : {}) };
    }
    case 'SERP_CRAWL_TRANSIENT': {
      if (/^timed out\b/.test(rest)) return { code: 'SERP_CRAWL_TRANSIENT', kind: 'timeout' };
      const status = /^Google answered HTTP (5\d\d)\b/.exec(rest)?.[1];
      if (status) return { code: 'SERP_CRAWL_TRANSIENT', kind: 'server_error', httpStatus: Number(status) };
      if (/^Google error page\b/.test(rest)) return { code: 'SERP_CRAWL_TRANSIENT', kind: 'error_page' };
      return { code: 'SERP_CRAWL_TRANSIENT', kind: 'network' };
    }
    case 'SERP_CRAWL_BAD_REQUEST': {
      if (/^unknown location "/.test(rest)) return { code: 'SERP_CRAWL_BAD_REQUEST', kind: 'unknown_location' };
      if (/^engine_domain\b/.test(rest)) return { code: 'SERP_CRAWL_BAD_REQUEST', kind: 'engine_domain' };
      const status = /^Google answered HTTP (4\d\d)\b/.exec(rest)?.[1];
      if (status) return { code: 'SERP_CRAWL_BAD_REQUEST', kind: 'http_status', httpStatus: Number(status) };
      return { code: 'SERP_CRAWL_BAD_REQUEST', kind: 'invalid' };
    }
    default:
      return { code: 'SERP_CRAWL_UNEXPECTED' };
  }
};

/** The failure of a failed job, whether recorded with its code or (older events) as text only. */
export const failureOfJob = (job: Pick<JobStatusDoc, 'failure' | 'detail'>): CrawlFailure | undefined =>
  job.failure ?? legacyFailure(job.detail);

/** The public line for a failed job. */
export const publicFailureDetail = (job: Pick<JobStatusDoc, 'failure' | 'detail' | 'request'>): string => {
  const failure = failureOfJob(job);
  return failure ? failureDetail(failure, job.request.location) : `The search could not be completed; ${RETRY}`;
};
