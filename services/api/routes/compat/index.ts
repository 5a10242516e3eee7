import type { FastifyError, FastifyPluginAsync, FastifyReply } from 'fastify';
import { DomainError, errorCodes } from '../../../../domain/kernel/errors.js';
import { keyCheck } from '../../auth.js';
import { ApiError, clip, secondsToNextMonth, unavailableOf } from '../../errors.js';
import { checkSubmitRate } from '../../limits.js';
import { accountRoutes } from './account.js';
import { locationRoutes } from './locations.js';
import type { CompatOptions } from './options.js';
import { searchRoutes } from './search.js';

export type { CompatOptions } from './options.js';

/** SerpApi's wording for the errors its clients look for (docs/compat.md#statuses-and-errors); ours elsewhere. */
export const INVALID_KEY =
  'Invalid API key. Your API key should be in the api_key parameter, the X-API-Key header or Authorization: Bearer; keys come from this service (serp-api keys create).';
export const OUT_OF_SEARCHES = 'Your account has run out of searches.';

export const sendCompatError = (
  reply: FastifyReply,
  status: number,
  message: string,
  headers: Record<string, string> = {},
) =>
  reply
    .code(status)
    .headers(headers)
    .type('application/json')
    .send(JSON.stringify({ error: message, detail: message }));

/**
 * The SerpApi-compatible surface at the root (`/search`, `/searches/{id}`, `/account`, `/locations.json`): the key as
 * `api_key` (never logged: server.ts redacts it), `X-API-Key` or Bearer; every error in SerpApi's `{"error"}` shape.
 */
export const compatRoutes: FastifyPluginAsync<CompatOptions> = async (app, opts) => {
  app.addHook('onRequest', keyCheck(opts, true));
  app.addHook('preHandler', async (req, reply) => {
    if (req.routeOptions.config.limit === 'submit') await checkSubmitRate(opts.limiter, req.apiKey!, reply);
  });

  app.setErrorHandler((thrown: FastifyError, req, reply) => {
    const err = (unavailableOf(thrown) as FastifyError | undefined) ?? thrown;
    if (err instanceof ApiError) {
      if (err.statusCode === 401) return sendCompatError(reply, 401, INVALID_KEY);
      if (err.code === 'SERP_RATE_LIMITED') {
        const minute = req.routeOptions.config.limit === 'submit';
        return sendCompatError(
          reply,
          429,
          minute
            ? `Your account has exceeded its rate limit of ${req.apiKey?.rateLimitPerMin ?? '?'} searches per minute. Retry after ${err.headers['Retry-After'] ?? 60} s.`
            : `Too many requests for this key. Retry after ${err.headers['Retry-After'] ?? 60} s.`,
          err.headers,
        );
      }
      return sendCompatError(reply, err.statusCode === 422 ? 400 : err.statusCode, err.detail, err.headers);
    }
    if (err instanceof DomainError && err.code === errorCodes.quotaExceeded) {
      return sendCompatError(reply, 429, OUT_OF_SEARCHES, { 'Retry-After': String(secondsToNextMonth()) });
    }
    if (err instanceof DomainError) return sendCompatError(reply, 400, err.message);
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return sendCompatError(reply, err.statusCode, clip(err.message, 200));
    }
    req.log.error({ err }, 'unhandled error');
    return sendCompatError(reply, 500, 'Internal error. Retry with backoff.');
  });

  const { prefix: _prefix, ...routeOptions } = opts as CompatOptions & { prefix?: string };
  await app.register(searchRoutes, routeOptions);
  await app.register(accountRoutes, routeOptions);
  await app.register(locationRoutes, routeOptions);
};
