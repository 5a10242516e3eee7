import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ErrorBody } from '../../../contracts/errors.js';
import { UsageResponse } from '../../../contracts/search.js';
import type { RouteContext } from '../app.js';
import { checkReadCeiling } from './limits.js';

export const registerUsageRoute = (app: FastifyInstance, ctx: RouteContext) => {
  app.withTypeProvider<ZodTypeProvider>().get('/v1/usage', {
    schema: {
      summary: 'Tier, monthly quota, usage this month and what remains',
      response: { 200: UsageResponse, 401: ErrorBody, 429: ErrorBody },
    },
    onRequest: async (req) => {
      await checkReadCeiling(ctx, ctx.authenticate(req));
    },
    handler: async (req) => ctx.searches.usage(req.apiKey!),
  });
};
