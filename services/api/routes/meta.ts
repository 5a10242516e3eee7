import type { FastifyInstance } from 'fastify';

const llms = `# SERP API

> Live Google search results (top 100 organic results, AI Overview and other SERP features) as clean JSON,
> targeted by location, language and device.

## Surfaces
- Native REST API under /v1: POST /v1/search (submit, returns job_id), GET /v1/search/{job_id}?output=json|compat|html (202 while running, 200 when done), GET /v1/usage. Auth: X-API-Key header or Authorization: Bearer.
- SerpApi-compatible surface at the root: /search, /searches/{id}, /account, /locations.json.
- MCP server: the command serp-api-mcp (stdio) with tools serp_search, serp_get_results, serp_usage; configure SERP_API_BASE_URL and SERP_API_KEY.

## Schema
- [OpenAPI 3.1](/openapi.json)
`;

export const registerMetaRoutes = (app: FastifyInstance) => {
  app.get('/health', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/llms.txt', { schema: { hide: true } }, async (_req, reply) =>
    reply.type('text/plain; charset=utf-8').send(llms),
  );
};
