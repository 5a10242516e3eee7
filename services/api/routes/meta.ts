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
- POST /v1/search with a JSON body: keyword (required), location ("Austin, Texas, United States" or a country), gl, hl, device (desktop|mobile|tablet), depth (organic results wanted, 10-100, default 100; 10 is one Google page and the quickest, and a cached deeper result answers it), stop_domain, capture_aio (default true), uule, lat/lon/radius, engine_domain, tbs, tbm, safe, nfpr, filter, lr, cr, ludocid, lsig, kgmid, si, ibp, uds, color_scheme, the advanced-search fields as_dt, as_epq, as_eq, as_lq, as_nlo, as_nhi, as_oq, as_q, as_qdr, as_rq, as_sitesearch, no_cache, async (default true). Answers 202 {job_id, status: "queued"}, or 200 {cached: true} when an identical fresh result at least as deep exists (no quota used).
- GET /v1/search/{job_id}?output=json|compat|html&start=N: 202 {status: "running"} while the job runs; 200 with the result once done or partial (json: search_metadata, organic_results, serp_features, ai_overview; compat: SerpApi's envelope; html: a signed link to the raw pages); a failed job is 200 {status: "failed", detail}.
- GET /v1/usage: tier, monthly_quota, used_this_month, remaining, rate_limit_per_min.
- Submit many searches, then poll each job every 1.5-2 seconds; a search takes 5-30 s (up to ten Google pages).
- Errors carry a one-line \`detail\` and a stable \`code\`: 401 key, 404 job, 410 expired, 422 parameters, 429 quota (SERP_QUOTA_EXCEEDED) or rate (SERP_RATE_LIMITED), each with Retry-After.

## SerpApi-compatible API (root)
- GET /search.json?engine=google&q=...&api_key=... (SerpApi's parameter names; synchronous unless async=true), GET /searches/{id}.json, GET /account.json, GET /locations.json?q=... (no key). An existing SerpApi client changes only its host. Without num, Google's first page (10 results) and serpapi_pagination.next; num up to 100 gives the merged top in one answer; the same search again by the same key, from the cache, keeps its search id.

## MCP server (for agents)
- Tools: serp_search (the /v1 body plus wait, max_wait_seconds, output, mode; waits for the result by default), serp_get_results (job_id, output json|compat|html, start, mode compact|full), serp_usage. Results are compact by default (positions, titles, links, snippets, AI Overview text and references, SERP features in short lines); mode=full returns the whole body.
- Streamable HTTP on this service: POST/GET/DELETE /mcp with the API key as X-API-Key or Bearer (sessions per MCP's 2025-06-18 transport).
- stdio: the command serp-api-mcp (this package's bin), configured by SERP_API_BASE_URL (this service's address) and SERP_API_KEY.

## Schema
- [OpenAPI 3.1](/openapi.json): every route, including /mcp, the compat routes and the admin API
`;

/** Keyless documents: health, the live OpenAPI schema, the LLM index. */
export const metaRoutes: FastifyPluginAsync = async (app) => {
  const meta = { tags: ['meta'], security: [] };
  app.get(
    '/health',
    {
      schema: {
        ...meta,
        operationId: 'getHealth',
        summary: 'Liveness: 200 while the process serves',
        response: { 200: z.object({ status: z.literal('ok') }), 400: BadRequest },
      },
    },
    async () => ({ status: 'ok' }),
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
