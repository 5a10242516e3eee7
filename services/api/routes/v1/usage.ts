import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ErrorBody } from '../../../../contracts/errors.js';
import { UsageResponse } from '../../../../contracts/search.js';
import { createServerTiming } from '../../serverTiming.js';
import type { V1Options } from './options.js';

export const usageRoutes: FastifyPluginAsync<V1Options> = async (app, opts) => {
  app.withTypeProvider<ZodTypeProvider>().get('/usage', {
    config: { limit: 'read' },
    schema: {
      operationId: 'getUsage',
      tags: ['native'],
      summary: 'Tier, monthly quota, usage this month and what remains',
      response: { 200: UsageResponse, 401: ErrorBody, 429: ErrorBody },
    },
    handler: async (req, reply) => {
      const timing = createServerTiming({ sinceRequest: () => reply.elapsedTime, before: req.checkTimes });
      // read-your-writes: a submit answered a moment ago is counted
      await timing.time('own-writes', () => opts.searches.settled(req.apiKey!.keyId));
      const usage = opts.searches.usage(req.apiKey!);
      reply.header('server-timing', timing.header());
      return usage;
    },
  });
};
