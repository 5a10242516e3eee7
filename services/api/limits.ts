import type { FastifyReply } from 'fastify';
import type { ApiKeyDoc } from '../../../projections/apiKeys/apiKeys.js';
import type { RateDecision } from '../../ports/rateLimiter.js';
import type { RouteContext } from '../app.js';
import { ApiError } from '../errors.js';

const headersOf = (d: RateDecision) => ({
  'RateLimit-Limit': String(d.limit),
  'RateLimit-Remaining': String(d.remaining),
  'RateLimit-Reset': String(d.resetSeconds),
});

const refuse = (d: RateDecision) =>
  new ApiError(429, 'SERP_RATE_LIMITED', 'rate limit exceeded', {
    ...headersOf(d),
    'Retry-After': String(d.resetSeconds),
  });

/** Submissions count against the key's per-minute rate (DESIGN.md §4). */
export const checkSubmitRate = async (ctx: RouteContext, key: ApiKeyDoc, reply: FastifyReply) => {
  const d = await ctx.limiter.hit(`submit:${key.keyId}`, key.rateLimitPerMin);
  if (!d.allowed) throw refuse(d);
  reply.headers(headersOf(d));
};

/** Polls and other reads have their own abuse ceiling, max(600, 10 × rate) a minute. */
export const checkReadCeiling = async (ctx: RouteContext, key: ApiKeyDoc) => {
  const d = await ctx.limiter.hit(`read:${key.keyId}`, Math.max(600, 10 * key.rateLimitPerMin));
  if (!d.allowed) throw refuse(d);
};
