import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { ErrorBody } from '../../../contracts/errors.js';

/** Any route answers 400 to a request without Host or with a malformed URL (server.ts). */
const BadRequest = ErrorBody.describe('a malformed request (no Host header, a bad URL)');

const llms = `# SERP API

> Live Google search results (top 100 organic results, AI Overview and other SERP features) as clean JSON,
> targeted by location, language and device.

## Surfaces
- Native REST API under /v1: POST /v1/search (submit, returns job_id), GET /v1/search/{job_id}?output=json|compat|html (202 while running, 200 when done), GET /v1/usage. Auth: X-API-Key header or Authorization: Bearer.
- Submit many searches, then poll each job every 2-3 seconds; a search takes 5-30 s (up to ten Google pages).
- Errors carry a one-line \`detail\`: 401 key, 404 job, 422 parameters, 429 quota or rate (see Retry-After).

## Schema
- [OpenAPI 3.1](/openapi.json)
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
