import type { FastifyPluginAsync } from 'fastify';
import { monitorRoutes } from '../../../monitors/http/monitors.js';
import { screenshotRoutes } from '../../../searches/http/screenshot.js';
import { searchRoutes } from '../../../searches/http/search.js';
import { webhookRoutes } from '../../../webhooks/http/webhooks.js';
import { keyCheck } from '../../auth.js';
import { checkSubmitRate } from '../../limits.js';
import type { V1Options } from './options.js';
import { usageRoutes } from './usage.js';

export type { V1Options } from './options.js';

/**
 * `/v1`: every route needs a key (X-API-Key or Bearer), checked once here for the whole scope. A route's
 * `config.limit` says which per-key ceiling it counts against: reads before validation (so floods of bad requests
 * still count), submissions after it (a refused body is not a submission).
 */
export const v1Routes: FastifyPluginAsync<V1Options> = async (app, opts) => {
  app.addHook('onRequest', keyCheck(opts, false));
  app.addHook('preHandler', async (req, reply) => {
    if (req.routeOptions.config.limit === 'submit') await checkSubmitRate(opts.limiter, req.apiKey!, reply);
  });
  // the options without the scope's own prefix, which nested plugins would add a second time
  const { prefix: _prefix, ...routeOptions } = opts as V1Options & { prefix?: string };
  await app.register(searchRoutes, routeOptions);
  await app.register(screenshotRoutes, routeOptions);
  await app.register(usageRoutes, routeOptions);
  await app.register(monitorRoutes, routeOptions);
  await app.register(webhookRoutes, routeOptions);
};
