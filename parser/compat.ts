import type { SerpResult } from '../contracts/result.js';
import { GOOGLE_PASS_THROUGH } from '../contracts/search.js';

type SearchMetadata = SerpResult['search_metadata'];

/**
 * SerpApi's envelope (docs/compat.md#envelope): `search_metadata` with SerpApi's status words and
 * "YYYY-MM-DD HH:MM:SS UTC" timestamps, `search_parameters` (the request, never the key), `search_information`,
 * then each feature at the top level under the name it already carries. Only names that differ are mapped here.
 */
export const toCompat = (result: SerpResult): Record<string, unknown> => {
  const m = result.search_metadata;
  const out: Record<string, unknown> = {
    search_metadata: {
      id: m.id,
      status: compatStatus(m.status),
      created_at: serpApiTime(m.created_at),
      ...(m.processed_at ? { processed_at: serpApiTime(m.processed_at) } : {}),
      ...(m.total_time_taken !== undefined ? { total_time_taken: m.total_time_taken } : {}),
      ...(typeof m.parameters.google_url === 'string' ? { google_url: m.parameters.google_url } : {}),
      // a field of ours (docs/compat.md#envelope): where Google placed the search against where it was asked to
      ...(m.location_check ? { location_check: m.location_check } : {}),
    },
    search_parameters: searchParameters(m),
    search_information: searchInformation(m.information),
  };
  for (const [name, value] of Object.entries(result.serp_features)) {
    // Google's page links lead to pages this search already merged in (or never fetched), and there is no link of
    // ours to the next page: neither `pagination` nor `serpapi_pagination` can be filled honestly, so both are left
    // out.
    if (name === 'pagination' || name === 'serpapi_pagination') continue;
    out[name] = value;
  }
  if (result.ai_overview) out.ai_overview = result.ai_overview;
  out.organic_results = result.organic_results.map(({ page: _page, ...r }) => r);
  return out;
};

const compatStatus = (status: string): string => {
  if (status === 'done' || status === 'partial') return 'Success';
  if (status === 'failed') return 'Error';
  if (status === 'queued') return 'Queued';
  return 'Processing';
};

const serpApiTime = (iso: string): string => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
};

/**
 * Request parameters SerpApi's google engine takes under the same name and meaning as ours (docs/compat.md#parameters).
 */
const ECHOED = ['uule', ...GOOGLE_PASS_THROUGH] as const;

/**
 * SerpApi's `search_parameters` (docs/compat.md#envelope): `engine`, `q`, `location_requested` / `location_used` (the
 * geotarget's canonical name), `google_domain` (default google.com), `hl`, `gl`, `device`, then the Google
 * parameters the request gave. What the crawl sent (`targeting`) wins over the request; names of our own
 * (`keyword`, `engine_domain`, `capture_aio`, `no_cache`, `stop_domain`, …) are not echoed under SerpApi's.
 */
const searchParameters = (m: SearchMetadata): Record<string, unknown> => {
  const p = m.parameters;
  const t = m.targeting;
  const out: Record<string, unknown> = { engine: 'google' };
  const q = p.q ?? p.keyword ?? p.query;
  if (q !== undefined) out.q = q;
  if (typeof p.location === 'string') {
    out.location_requested = p.location;
    if (t?.location) out.location_used = t.location;
  }
  out.google_domain = t?.google_domain ?? p.engine_domain ?? p.google_domain ?? 'google.com';
  const hl = t?.hl ?? p.hl;
  if (hl !== undefined) out.hl = hl;
  const gl = t?.gl ?? p.gl;
  if (gl !== undefined) out.gl = gl;
  out.device = t?.device ?? p.device ?? 'desktop';
  for (const name of ECHOED) if (p[name] !== undefined) out[name] = p[name];
  return out;
};

/** SerpApi's `search_parameters` for a request and the targeting a crawl used (or none yet, while it runs). */
export const compatSearchParameters = (
  parameters: Record<string, unknown>,
  targeting?: SearchMetadata['targeting'],
): Record<string, unknown> => searchParameters({ parameters, targeting } as SearchMetadata);

/** SerpApi's time format: "YYYY-MM-DD HH:MM:SS UTC". */
export const serpApiTimestamp = (iso: string): string => serpApiTime(iso);

const searchInformation = (info: Record<string, unknown>): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const key of ['query_displayed', 'total_results', 'time_taken_displayed', 'organic_results_state']) {
    if (info[key] !== undefined) out[key] = info[key];
  }
  if (info.spelling_fix !== undefined) out.spelling_fix = info.spelling_fix;
  if (info.showing_results_for !== undefined) out.showing_results_for = info.showing_results_for;
  // a field of ours (docs/compat.md#envelope): where Google says it placed the search
  if (info.detected_location !== undefined) out.detected_location = info.detected_location;
  return out;
};
