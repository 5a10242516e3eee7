import type { HistoryResponse } from '../../contracts/monitors.js';
import type { UsageResponse } from '../../contracts/search.js';

/**
 * A small typed client of the `/v1` surface over HTTP: the MCP server's (stdio and `/mcp`) and the CLI's. It sends the
 * key as `X-API-Key`, never logs it, bounds every request with a timeout, and turns every non-2xx answer into a
 * `V1Error` carrying the service's own `detail`.
 */

/** A `fetch` the client can be given: the global one, or one that answers in-process (`/mcp` on the service). */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
) => Promise<{
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
  /** the body as bytes (an image) */
  bytes?(): Promise<Buffer>;
}>;

export type V1ErrorKind = 'quota' | 'rate' | 'auth' | 'not_found' | 'expired' | 'invalid' | 'unavailable' | 'other';

export class V1Error extends Error {
  constructor(
    readonly status: number,
    readonly kind: V1ErrorKind,
    readonly detail: string,
    readonly code?: string,
    /** seconds, from `Retry-After` */
    readonly retryAfter?: number,
  ) {
    super(detail);
    this.name = 'V1Error';
  }
}

export interface V1Answer {
  status: number;
  body: Record<string, unknown>;
}

export interface V1ClientOptions {
  baseUrl: string;
  apiKey: string;
  fetch?: FetchLike;
  /** per request (default 30 s) */
  timeoutMs?: number;
}

const kindOf = (status: number, code: string | undefined): V1ErrorKind => {
  if (status === 429) return code === 'SERP_QUOTA_EXCEEDED' ? 'quota' : 'rate';
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'not_found';
  if (status === 410) return 'expired';
  if (status === 400 || status === 413 || status === 415 || status === 422) return 'invalid';
  if (status >= 500) return 'unavailable';
  return 'other';
};

const errorOf = (status: number, text: string, retryAfter: string | null) => {
  let body: { detail?: unknown; code?: unknown } = {};
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON (a proxy's error page): the status says enough
  }
  const code = typeof body.code === 'string' ? body.code : undefined;
  const detail = typeof body.detail === 'string' ? body.detail : `the service answered HTTP ${status}`;
  const seconds = retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined;
  return new V1Error(status, kindOf(status, code), detail, code, seconds);
};

export const createV1Client = (options: V1ClientOptions) => {
  const base = options.baseUrl.replace(/\/+$/, '');
  const doFetch: FetchLike =
    options.fetch ??
    (async (url, init) => {
      const res = await fetch(url, init);
      return Object.assign(res, { bytes: async () => Buffer.from(await res.arrayBuffer()) });
    });
  const timeoutMs = options.timeoutMs ?? 30_000;

  const call = async (method: string, path: string, body?: unknown): Promise<V1Answer> => {
    const headers: Record<string, string> = { 'x-api-key': options.apiKey, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new V1Error(504, 'unavailable', `${base} did not answer within ${timeoutMs / 1000} s`)),
        timeoutMs,
      );
    });
    try {
      const res = await Promise.race([
        doFetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }),
        timeout,
      ]);
      const text = await Promise.race([res.text(), timeout]);
      if (res.status >= 400) throw errorOf(res.status, text, res.headers.get('retry-after'));
      try {
        return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
      } catch {
        throw new V1Error(502, 'unavailable', `${base}${path} answered ${res.status} with a body that is not JSON`);
      }
    } catch (err) {
      if (err instanceof V1Error) throw err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (err as Error).message;
      throw new V1Error(503, 'unavailable', `cannot reach ${base}: ${why}`);
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    baseUrl: base,
    /** POST /v1/search: 202 queued, or 200 `cached: true` */
    submit: (body: Record<string, unknown>) => call('POST', '/v1/search', body),
    /** GET /v1/search/{id}: 202 while running, 200 once the job ended */
    result: (jobId: string, query: { output: string; start?: number }) => {
      const qs = new URLSearchParams({ output: query.output });
      if (query.start !== undefined) qs.set('start', String(query.start));
      return call('GET', `/v1/search/${encodeURIComponent(jobId)}?${qs}`);
    },
    usage: async () => (await call('GET', '/v1/usage')).body as unknown as UsageResponse,
    /** GET /v1/monitors */
    monitors: async () => (await call('GET', '/v1/monitors')).body.monitors as Array<Record<string, unknown>>,
    /** GET /v1/monitors/{id}, and with `path` one of its reads (`/history?…`, `/visibility`, `/changes`) */
    monitor: (id: string, path = '') => call('GET', `/v1/monitors/${encodeURIComponent(id)}${path}`),
    /** GET /v1/monitors/{id}/history?… : the points, typed as the route declares them */
    history: async (id: string, query: URLSearchParams) =>
      (await call('GET', `/v1/monitors/${encodeURIComponent(id)}/history?${query}`)).body as unknown as HistoryResponse,
    /** POST /v1/monitors, POST /v1/monitors/{id}/runs */
    createMonitor: (body: Record<string, unknown>) => call('POST', '/v1/monitors', body),
    runMonitor: (id: string) => call('POST', `/v1/monitors/${encodeURIComponent(id)}/runs`, {}),
    /** GET /v1/search/{id}/screenshot?viewport=1: the first screen's PNG */
    firstScreen: async (jobId: string): Promise<Buffer> => {
      const res = await doFetch(`${base}/v1/search/${encodeURIComponent(jobId)}/screenshot?viewport=1&format=png`, {
        method: 'GET',
        headers: { 'x-api-key': options.apiKey, accept: 'image/png' },
      });
      if (res.status >= 400) throw errorOf(res.status, await res.text(), res.headers.get('retry-after'));
      return res.bytes ? res.bytes() : Buffer.from(await res.text(), 'latin1');
    },
    /** GET /v1/search/{id}?output=json&pixel_positions=1 */
    positioned: (jobId: string) => call('GET', `/v1/search/${encodeURIComponent(jobId)}?output=json&pixel_positions=1`),
    /** GET `path` with the key, the response as it comes (a CSV export, streamed to stdout) */
    raw: (path: string) => fetch(`${base}${path}`, { headers: { 'x-api-key': options.apiKey } }),
  };
};
export type V1Client = ReturnType<typeof createV1Client>;
