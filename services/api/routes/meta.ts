import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { ErrorBody } from '../../../contracts/errors.js';

/** Any route answers 400 to a request without Host or with a malformed URL (server.ts). */
const BadRequest = ErrorBody.describe('a malformed request (no Host header, a bad URL)');

const llms = `# SERP API

> Live Google search results (top 100 organic results, AI Overview and other SERP features) as clean JSON,
> targeted by location, language and device. Three surfaces over the same searches, cache and quota; every one
> takes the API key as the X-API-Key header or Authorization: Bearer.

## Native REST API (/v1)
- POST /v1/search with a JSON body: keyword (required), location ("Austin, Texas, United States" or a country), gl, hl, device (desktop|mobile|tablet), depth (organic results wanted, 10-100, default 100; 10 is one Google page and the quickest, and a cached deeper result answers it), stop_domain, capture_aio (default true), pixel_positions (each result's rectangle on the rendered first page, pixels_from_top and above_the_fold; one render a search), uule, lat/lon/radius, engine_domain, tbs, tbm, safe, nfpr, filter, lr, cr, ludocid, lsig, kgmid, si, ibp, uds, color_scheme, the advanced-search fields as_dt, as_epq, as_eq, as_lq, as_nlo, as_nhi, as_oq, as_q, as_qdr, as_rq, as_sitesearch, no_cache, async (default true). Answers 202 {job_id, status: "queued"}, or 200 {cached: true} when an identical fresh result at least as deep exists (no quota used).
- GET /v1/search/{job_id}?output=json|compat|html&start=N: 202 {status: "running"} while the job runs; 200 with the result once done or partial (json: search_metadata, organic_results, serp_features, ai_overview; compat: SerpApi's envelope; html: a signed link to the raw pages); a failed job is 200 {status: "failed", detail}.
- GET /v1/search/{job_id}/screenshot?viewport=1&format=png|webp&width=&scale=: the stored page as Google served it, rendered offline (409 while the search runs, 410 once its raw page is gone).
- GET /v1/usage: tier, monthly_quota, used_this_month, remaining, rate_limit_per_min.
- Submit many searches, then poll each job every 1.5-2 seconds; a search takes 5-30 s (up to ten Google pages).
- Errors carry a one-line \`detail\` and a stable \`code\`: 401 key, 404 job, 410 expired, 422 parameters, 429 quota (SERP_QUOTA_EXCEEDED) or rate (SERP_RATE_LIMITED), each with Retry-After.

## SerpApi-compatible API (root)
- GET /search.json?engine=google&q=...&api_key=... (SerpApi's parameter names; synchronous unless async=true), GET /searches/{id}.json, GET /account.json, GET /locations.json?q=... (no key). An existing SerpApi client changes only its host. Without num, Google's first page (10 results) and serpapi_pagination.next; num up to 100 gives the merged top in one answer; the same search again by the same key, from the cache, keeps its search id.

## MCP server (for agents)
- Tools: serp_search (the /v1 body plus wait, max_wait_seconds, output, mode; waits for the result by default), serp_get_results (job_id, output json|compat|html, start, mode compact|full), serp_usage, serp_screenshot (a finished search's first screen as an image, with the tracked domain's rectangles). Results are compact by default (positions, titles, links, snippets, AI Overview text and references, SERP features in short lines); mode=full returns the whole body.
- Streamable HTTP on this service: POST/GET/DELETE /mcp with the API key as X-API-Key or Bearer (sessions per MCP's 2025-06-18 transport).
- stdio: the command serp-api-mcp (this package's bin), configured by SERP_API_BASE_URL (this service's address) and SERP_API_KEY.

## Schema
- [OpenAPI 3.1](/openapi.json): every route, including /mcp, the compat routes and the admin API
`;

/** What `GET /` points a newcomer to: the keyless documents, the surfaces, and the docs in the checkout. */
const RootIndex = z.object({
  name: z.literal('serp-api'),
  version: z.string(),
  description: z.string(),
  links: z.object({
    openapi: z.literal('/openapi.json'),
    llms: z.literal('/llms.txt'),
    admin: z.literal('/admin'),
    health: z.literal('/health'),
    search: z.literal('/v1/search'),
    mcp: z.literal('/mcp'),
  }),
  docs: z.record(z.string(), z.string()).describe('the documents in the checkout (docs/…), by topic'),
});

const rootIndex = (version: string): z.infer<typeof RootIndex> => ({
  name: 'serp-api',
  version,
  description:
    'Live Google search results as clean JSON: POST /v1/search with an API key, then poll GET /v1/search/{job_id}; the SerpApi-compatible routes at the root; an MCP server at /mcp.',
  links: {
    openapi: '/openapi.json',
    llms: '/llms.txt',
    admin: '/admin',
    health: '/health',
    search: '/v1/search',
    mcp: '/mcp',
  },
  docs: {
    start: 'README.md',
    api: 'docs/api.md',
    compat: 'docs/compat.md',
    mcp: 'docs/mcp.md',
    rank_tracking: 'docs/rank-tracking.md',
    webhooks: 'docs/webhooks.md',
    operations: 'docs/operations.md',
  },
});

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** The same index for a browser: plain links, no script or style (the JSON routes' CSP, default-src 'none', holds) */
const rootHtml = (index: z.infer<typeof RootIndex>) => {
  const link = (href: string, text: string) => `<li><a href="${escapeHtml(href)}">${escapeHtml(text)}</a></li>`;
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>serp-api ${escapeHtml(index.version)}</title></head>
<body>
<h1>serp-api ${escapeHtml(index.version)}</h1>
<p>${escapeHtml(index.description)}</p>
<ul>
${link('/openapi.json', 'OpenAPI 3.1: every route, field and status')}
${link('/llms.txt', 'llms.txt: the service in one page, for language models')}
${link('/admin', 'the admin dashboard (the admin token signs in)')}
${link('/health', 'health')}
</ul>
<p>Documents, in the checkout: ${Object.values(index.docs).map(escapeHtml).join(', ')}.</p>
</body>
</html>
`;
};

export interface MetaOptions {
  /** the package's version */
  version: string;
  /** SERP_INSTANCE_ID: what /health names this process (`cluster up` checks it) */
  instanceId: string;
}

/** Keyless documents: an index at `/`, health, the live OpenAPI schema, the LLM index. */
export const metaRoutes: FastifyPluginAsync<MetaOptions> = async (app, opts) => {
  const meta = { tags: ['meta'], security: [] };
  const index = rootIndex(opts.version);
  const indexJson = JSON.stringify(index);
  const indexHtml = rootHtml(index);
  app.get(
    '/',
    {
      schema: {
        ...meta,
        operationId: 'getIndex',
        summary: 'Where to start: links to the OpenAPI document, llms.txt, the dashboard and the docs',
        description: 'JSON, or HTML when the request accepts text/html (a browser).',
        response: {
          200: {
            description: 'the index',
            content: { 'application/json': { schema: RootIndex }, 'text/html': { schema: z.string() } },
          },
          400: BadRequest,
        },
      },
    },
    async (req, reply) =>
      /\btext\/html\b/.test(req.headers.accept ?? '')
        ? reply.type('text/html; charset=utf-8').send(indexHtml)
        : reply.type('application/json; charset=utf-8').send(indexJson),
  );
  app.get(
    '/health',
    {
      schema: {
        ...meta,
        operationId: 'getHealth',
        summary: 'Liveness: 200 while the process serves, naming the process',
        response: {
          200: z.object({
            status: z.literal('ok'),
            instance_id: z.string().describe('SERP_INSTANCE_ID, or a name made when the process started'),
          }),
          400: BadRequest,
        },
      },
    },
    async () => ({ status: 'ok' as const, instance_id: opts.instanceId }),
  );
  app.get(
    '/openapi.json',
    {
      schema: {
        ...meta,
        operationId: 'getOpenApi',
        summary: 'This document',
        response: { 200: z.record(z.string(), z.unknown()).describe('OpenAPI 3.1 document'), 400: BadRequest },
      },
    },
    async () => app.swagger(),
  );
  app.get(
    '/llms.txt',
    {
      schema: {
        ...meta,
        operationId: 'getLlmsTxt',
        summary: 'An index of the service for language models',
        response: {
          200: { description: 'plain text', content: { 'text/plain': { schema: z.string() } } },
          400: BadRequest,
        },
      },
    },
    async (_req, reply) => reply.type('text/plain; charset=utf-8').send(llms),
  );
};
