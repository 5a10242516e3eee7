import type { SerpResult } from '../../contracts/result.js';
import { depthOf, MAX_DEPTH } from '../../contracts/search.js';
import { isWrongPlace, misplacedSentence } from '../../domain/location/placement.js';
import { compatSearchParameters, serpApiTimestamp, toCompat } from '../../parser/index.js';
import type { JobStatusDoc } from '../../projections/jobStatus/jobStatus.js';
import type { SearchResultDoc } from '../../projections/searchResults/searchResults.js';
import type { LinkSettings } from './html.js';
import { nativeResult } from './native.js';
import { signRawLink } from './signing.js';

/** `output=compat`: the native result under SerpApi's names and envelope (the parser's mapping). */
/** ours beside SerpApi's `search_metadata` (docs/compat.md): the lane the search waited in and how long */
const laneOf = (native: SerpResult) =>
  native.search_metadata.lane !== undefined
    ? { lane: native.search_metadata.lane, queued_ms: native.search_metadata.queued_ms }
    : {};

/**
 * SerpApi's `error` for a search Google still placed elsewhere after its retry (docs/locations.md#what-each-surface-answers),
 * or undefined for any other search. Its ranks are another place's: a client that reads `status` must not record them.
 */
export const misplacedError = (native: Pick<SerpResult, 'search_metadata'>): string | undefined => {
  const m = native.search_metadata;
  const check = m.location_check;
  if (m.status !== 'partial' || !check || !isWrongPlace(check.status)) return undefined;
  return misplacedSentence({
    status: check.status,
    ...(check.requested ? { requested: check.requested } : {}),
    ...(check.detected?.name ? { detected: check.detected.name } : {}),
  });
};

/** the Error document a misplaced search answers with: what SerpApi's clients read as a failed search, no results */
const misplacedDocument = (out: Record<string, unknown>, error: string): Record<string, unknown> => ({
  search_metadata: { ...(out.search_metadata as Record<string, unknown>), status: 'Error' },
  search_parameters: out.search_parameters,
  ...(out.search_information ? { search_information: out.search_information } : {}),
  error,
});

export const compatResult = (native: SerpResult): Record<string, unknown> => {
  const out = toCompat(native);
  out.search_metadata = { ...(out.search_metadata as Record<string, unknown>), ...laneOf(native) };
  const misplaced = misplacedError(native);
  return misplaced ? misplacedDocument(out, misplaced) : out;
};

/**
 * SerpApi's line for a search with no results (docs/compat.md#statuses-and-errors): a 200, billed, with a top-level
 * `error`.
 */
export const EMPTY_RESULTS = "Google hasn't returned any results for this query.";

export interface CompatPage {
  /** offset into the merged organic results */
  start: number;
  /** how many from `start` (1–100; 10 when the client gives none, Google's page) */
  num: number;
}

/** The depth a compat request crawls: what its page needs, `start` + `num`, within the top 100 (docs/depth.md). */
export const depthForPage = (page: CompatPage): number => Math.min(MAX_DEPTH, page.start + page.num);

export interface CompatLinkSettings extends LinkSettings {
  baseUrl: string;
  /**
   * the request as the client sent it (SerpApi's names, no key): pagination links repeat it with another `start`,
   * so a client that follows them, or parses their parameters into a new call, lands on the same merged result
   */
  query: Record<string, string>;
}

const metadataOf = (job: JobStatusDoc, links: { baseUrl: string }) => ({
  id: job.jobId,
  json_endpoint: `${links.baseUrl}/searches/${job.jobId}.json`,
  created_at: serpApiTimestamp(job.submittedAt),
});

/**
 * A search still running: `search_metadata` with `status: "Processing"` and the request
 * (docs/compat.md#async-and-the-archive).
 */
export const compatProcessing = (job: JobStatusDoc, links: CompatLinkSettings) => ({
  search_metadata: {
    ...metadataOf(job, links),
    status: job.status === 'queued' ? 'Queued' : 'Processing',
    processed_at: null,
    total_time_taken: 0,
  },
  search_parameters: compatSearchParameters(job.request),
});

/**
 * A failed search: SerpApi's `status: "Error"` document, with our public one-line reason as `error` (the compat
 * surface and `/v1`'s `output=compat` alike).
 */
export const compatFailed = (job: JobStatusDoc, links: { baseUrl: string }, detail: string) => ({
  search_metadata: { ...metadataOf(job, links), status: 'Error', processed_at: null },
  search_parameters: compatSearchParameters(job.request),
  error: detail,
});

const pageLink = (links: CompatLinkSettings, jobId: string, start: number, num: number) => {
  const params = new URLSearchParams({ ...links.query, start: String(start), num: String(num), search_id: jobId });
  return `${links.baseUrl}/search.json?${params.toString()}`;
};

/**
 * SerpApi's `serpapi_pagination` and `pagination` over the merged result: pages of `num` from `start`, as absolute
 * links on this service. They carry `search_id`, so following one slices this same result (no crawl, no quota) as
 * far as it goes; `more` says Google has results past `total` that a deeper crawl would fetch, so `next` is offered
 * there too (following it crawls, docs/depth.md). `next` starts right after the last result shown: a first page
 * of nine leaves no tenth result unseen.
 */
const paginationOf = (links: CompatLinkSettings, jobId: string, total: number, more: boolean, page: CompatPage) => {
  const current = Math.floor(page.start / page.num) + 1;
  const reach = more ? MAX_DEPTH : total;
  const pages = Math.max(1, Math.ceil(reach / page.num));
  const other: Record<string, string> = {};
  for (let p = 1; p <= pages; p++)
    if (p !== current) other[String(p)] = pageLink(links, jobId, (p - 1) * page.num, page.num);
  const shown = Math.max(0, Math.min(total, page.start + page.num) - page.start);
  const nextStart = page.start + shown;
  const next = shown > 0 && nextStart < reach ? pageLink(links, jobId, nextStart, page.num) : undefined;
  const previous = page.start > 0 ? pageLink(links, jobId, Math.max(0, page.start - page.num), page.num) : undefined;
  return {
    serpapi_pagination: {
      current,
      ...(previous ? { previous_link: previous, previous } : {}),
      ...(next ? { next_link: next, next } : {}),
      other_pages: other,
    },
    pagination: { current, ...(previous ? { previous } : {}), ...(next ? { next } : {}), other_pages: other },
  };
};

/**
 * A finished search in SerpApi's envelope: its merged top `depth` sliced to `page`, `search_metadata` with absolute
 * endpoints on this service, `search_information` and pagination; an empty result gets SerpApi's top-level `error`.
 */
export const compatDone = (
  job: JobStatusDoc,
  doc: SearchResultDoc,
  links: CompatLinkSettings,
  page: CompatPage,
): Record<string, unknown> => {
  const native = nativeResult(job, doc);
  const all = native.organic_results;
  // Google has more past this search's own results when its crawl stopped at its depth, or when it is a cache
  // answer cut from a deeper crawl; never past the top 100
  const depth = depthOf(job.request);
  const more = depth < MAX_DEPTH && (doc.result.organic_results.length > all.length || !doc.exhausted);
  const out = toCompat({ ...native, organic_results: all.slice(page.start, page.start + page.num) });
  const raw = signRawLink(links.linkSecret, links.baseUrl, job.jobId, links.presignTtlS);
  const meta = out.search_metadata as Record<string, unknown>;
  out.search_metadata = {
    id: meta.id,
    status: meta.status,
    json_endpoint: `${links.baseUrl}/searches/${job.jobId}.json`,
    created_at: meta.created_at,
    processed_at: meta.processed_at ?? meta.created_at,
    ...(meta.google_url ? { google_url: meta.google_url } : {}),
    raw_html_file: raw.url,
    total_time_taken: meta.total_time_taken ?? 0,
    ...laneOf(native),
    ...(meta.location_check ? { location_check: meta.location_check } : {}),
  };
  const misplaced = misplacedError(native);
  if (misplaced) return misplacedDocument(out, misplaced);
  const info = (out.search_information ?? {}) as Record<string, unknown>;
  if (all.length === 0) {
    out.search_information = { ...info, organic_results_state: 'Fully empty' };
    out.error = EMPTY_RESULTS;
  } else if (info.organic_results_state === undefined) {
    out.search_information = {
      ...info,
      organic_results_state: info.showing_results_for
        ? 'Some results for exact spelling but showing fixed spelling'
        : 'Results for exact spelling',
    };
  }
  Object.assign(out, paginationOf(links, job.jobId, all.length, more, page));
  return out;
};
