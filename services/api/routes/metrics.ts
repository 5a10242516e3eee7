import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { ErrorBody } from '../../../contracts/errors.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { AdminGuard } from '../auth.js';

/**
 * `GET /metrics`: Prometheus's text format, on the service's port, for the admin token as a Bearer header (the
 * numbers say how much the service does and for whom it fails: not for every key holder).
 */
export const metricsRoute: FastifyPluginAsync<{ guard: AdminGuard; metrics: Metrics }> = async (app, opts) => {
  app.addHook('onRequest', async (req) => opts.guard(req));
  app.get(
    '/metrics',
    {
      schema: {
        tags: ['admin'],
        operationId: 'getMetrics',
        summary: 'Prometheus metrics: HTTP, submits, cache, crawl outcomes, pages, queue depth, projection lag',
        security: [{ adminToken: [] }],
        response: {
          200: {
            description: 'Prometheus text exposition format 0.0.4',
            content: { 'text/plain': { schema: z.string() } },
          },
          400: ErrorBody.describe('a malformed request (no Host header, a bad URL)'),
          401: ErrorBody,
        },
      },
    },
    async (_req, reply) => {
      const text = await opts.metrics.text();
      return reply.type(opts.metrics.registry.contentType).send(text);
    },
  );
};
