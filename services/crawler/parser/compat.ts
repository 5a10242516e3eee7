import type { SerpResult } from '../../../contracts/result.js';

/**
 * SerpApi's envelope (docs/serpapi-reference.md §2): `search_metadata` with SerpApi's status words and
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
    },
    search_parameters: searchParameters(m.parameters),
    search_information: searchInformation(m.information),
  };
  for (const [name, value] of Object.entries(result.serp_features)) {
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

/** SerpApi echoes the request with `engine`, `q` and `device`; our native names are mapped onto those. */
const searchParameters = (p: Record<string, unknown>): Record<string, unknown> => {
  const { api_key: _key, keyword, query, google_url: _url, ...rest } = p;
  const q = p.q ?? keyword ?? query;
  return { engine: 'google', ...(q !== undefined ? { q } : {}), ...rest };
};

const searchInformation = (info: Record<string, unknown>): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const key of ['query_displayed', 'total_results', 'time_taken_displayed', 'organic_results_state']) {
    if (info[key] !== undefined) out[key] = info[key];
  }
  if (info.spelling_fix !== undefined) out.spelling_fix = info.spelling_fix;
  if (info.showing_results_for !== undefined) out.showing_results_for = info.showing_results_for;
  return out;
};
