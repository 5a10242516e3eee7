import type { FastifyReply } from 'fastify';
import type { ApiKeyDoc } from '../../projections/apiKeys/apiKeys.js';
import type { RateDecision, RateLimiter } from '../ports/rateLimiter.js';
import { ApiError } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Which per-key ceiling a route counts against (docs/api.md#limits): `submit` is the key's per-minute rate, `read`
     * the abuse ceiling of polls and other reads. Routes without one count against neither.
     */
    limit?: 'submit' | 'read';
  }
}

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

/** Submissions count against the key's per-minute rate. */
export const checkSubmitRate = async (limiter: RateLimiter, key: ApiKeyDoc, reply: FastifyReply) => {
  const d = await limiter.hit(`submit:${key.keyId}`, key.rateLimitPerMin);
  if (!d.allowed) throw refuse(d);
  reply.headers(headersOf(d));
};

/**
 * Polls and other reads have their own abuse ceiling, max(600, 10 × rate) a minute. It guards against abuse and
 * charges nothing, so it is counted with `hitNow`: a read never waits on a shared store (docs/api.md#limits).
 */
export const checkReadCeiling = (limiter: RateLimiter, key: ApiKeyDoc) => {
  const d = limiter.hitNow(`read:${key.keyId}`, Math.max(600, 10 * key.rateLimitPerMin));
  if (!d.allowed) throw refuse(d);
};
