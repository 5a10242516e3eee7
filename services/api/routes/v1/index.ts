import type { FastifyPluginAsync } from 'fastify';
import type { ReadModelQueries } from '../../../../projections/index.js';
import type { MonitorService } from '../../../application/monitors.js';
import type { SearchService } from '../../../application/searches.js';
import type { WebhookService } from '../../../application/webhooks.js';
import type { RateLimiter } from '../../../ports/rateLimiter.js';
import { type Authenticator, type AuthFailureGate, keyCheck } from '../../auth.js';
import { checkSubmitRate } from '../../limits.js';
import type { RenderDeps } from '../../render/index.js';
import type { StoredAnswers } from '../../render/stored.js';
import { monitorRoutes } from './monitors.js';
import { searchRoutes } from './search.js';
import { usageRoutes } from './usage.js';
import { webhookRoutes } from './webhooks.js';

/** What the native surface needs; compose builds it. */
export interface V1Options {
  searches: SearchService;
  authenticate: Authenticator;
  authFailures: AuthFailureGate;
  limiter: RateLimiter;
  render: RenderDeps;
  /** the origin signed links are built on */
  baseUrl(): string;
  /** SERP_SYNC_TIMEOUT_MS: how long `async: false` waits */
  syncTimeoutMs: number;
  /** SERP_RETENTION_DAYS: older jobs answer 410 */
  retentionDays: number;
  /** finished results as stored bytes, with ETag and compressed forms */
  stored: StoredAnswers;
  /** undefined when the location is unknown; the api answers 422 then */
  resolveLocation?: (name: string) => unknown;
  /** the closest places to a location that did not resolve, for the 422's "did you mean" */
  suggestLocations?: (name: string, limit: number) => string[];
  /** the read models (rank tracking reads its views through them) */
  queries: ReadModelQueries;
  /** rank tracking's commands (docs/rank-tracking.md); absent: no /v1/monitors routes */
  monitors?: MonitorService;
  /** webhooks (docs/webhooks.md); absent: no /v1/webhooks routes */
  webhooks?: WebhookService;
}

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
  await app.register(usageRoutes, routeOptions);
  await app.register(monitorRoutes, routeOptions);
  await app.register(webhookRoutes, routeOptions);
};
