import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { ApiKeyDoc } from '../../projections/apiKeys/apiKeys.js';
import type { ReadModelQueries } from '../../projections/index.js';
import { hashKey } from '../application/keys.js';
import type { RateLimiter } from '../ports/rateLimiter.js';
import { ApiError } from './errors.js';
import { checkReadCeiling } from './limits.js';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey?: ApiKeyDoc;
    /** the job a submit created, for the request's log line */
    submittedJobId?: string;
    /**
     * how long the key check took before the handler ran (ms): finding the key, and the read ceiling where the route
     * counts against it (a round trip to NATS KV in distributed mode); a read's Server-Timing reports them
     */
    checkTimes?: { key: number; limit?: number };
  }
  interface FastifyContextConfig {
    /** a route in a keyed scope that needs no key (SerpApi's Locations API) */
    keyless?: boolean;
  }
}

/** The raw key from `X-API-Key`, `Authorization: Bearer`, or (compat surface only) the `api_key` query parameter. */
export const rawKeyOf = (req: FastifyRequest, allowQuery: boolean): string | undefined => {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  const auth = req.headers.authorization;
  if (auth) {
    const m = /^Bearer\s+(.+)$/i.exec(auth.trim());
    if (m) return m[1].trim();
  }
  if (allowQuery) {
    const q = (req.query as Record<string, unknown> | undefined)?.api_key;
    if (typeof q === 'string' && q.trim()) return q.trim();
  }
  return undefined;
};

/**
 * Resolves the caller's key from the apiKeys read model by its HMAC: the raw key is never stored or logged.
 * A revoked key is refused as soon as its ApiKeyRevoked is projected, which the admin api waits for.
 *
 * A key this process does not know may have been minted a moment ago on another api process (distributed mode):
 * with `catchUp`, an unknown key is looked up again once the read models hold what the event store held when the
 * request came, so a key is usable on every api process as soon as its mint is acknowledged on one.
 */
export const createAuthenticator = (queries: ReadModelQueries, pepper: string, catchUp?: () => Promise<void>) => {
  return async (req: FastifyRequest, allowQuery = false): Promise<ApiKeyDoc> => {
    const raw = rawKeyOf(req, allowQuery);
    if (!raw) {
      throw new ApiError(
        401,
        'SERP_AUTH_MISSING_KEY',
        allowQuery
          ? 'missing API key: pass it as the api_key query parameter or the X-API-Key header'
          : 'missing API key: send it in the X-API-Key header or as Authorization: Bearer <key>',
      );
    }
    if (raw.length > 128) throw new ApiError(401, 'SERP_AUTH_INVALID_KEY', 'invalid API key');
    const hash = hashKey(raw, pepper);
    let doc = queries.keys.byHash(hash);
    if (!doc && catchUp) {
      await catchUp();
      doc = queries.keys.byHash(hash);
    }
    if (!doc) throw new ApiError(401, 'SERP_AUTH_INVALID_KEY', 'invalid API key');
    if (doc.status !== 'active') throw new ApiError(401, 'SERP_AUTH_REVOKED_KEY', 'this API key has been revoked');
    req.apiKey = doc;
    return doc;
  };
};
export type Authenticator = ReturnType<typeof createAuthenticator>;

/**
 * A scope's key check (onRequest): the per-IP ceiling on failures, the key (from the query too on the compat
 * surface), and the read ceiling for routes marked `config.limit: 'read'`. Routes marked `keyless` pass.
 */
export const keyCheck =
  (deps: { authenticate: Authenticator; authFailures: AuthFailureGate; limiter: RateLimiter }, allowQuery: boolean) =>
  async (req: FastifyRequest) => {
    if (req.routeOptions.config.keyless) return;
    deps.authFailures.check(req);
    let key: ApiKeyDoc;
    const t0 = performance.now();
    try {
      key = await deps.authenticate(req, allowQuery);
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 401) await deps.authFailures.failed(req);
      throw err;
    }
    const t1 = performance.now();
    if (req.routeOptions.config.limit !== 'read') {
      req.checkTimes = { key: t1 - t0 };
      return;
    }
    checkReadCeiling(deps.limiter, key);
    req.checkTimes = { key: t1 - t0, limit: performance.now() - t1 };
  };

/**
 * A ceiling on bad or missing credentials per client IP (API keys, the admin token, signed links;
 * docs/security.md#credentials): past `perMinute` failures the IP gets 429 for the rest of the window on every
 * request, good credentials or not, so guessing is slowed to `perMinute` guesses a minute.
 */
export const createAuthFailureGate = (limiter: RateLimiter, perMinute: number, now = Date.now) => {
  const blockedUntil = new Map<string, number>();
  const refuse = (until: number) => {
    const seconds = Math.max(1, Math.ceil((until - now()) / 1000));
    return new ApiError(
      429,
      'SERP_AUTH_TOO_MANY_FAILURES',
      `too many requests with a missing or invalid API key or admin token from this address: retry in ${seconds} s`,
      { 'retry-after': String(seconds) },
    );
  };
  return {
    /** before authenticating: an address over its ceiling is refused whatever key it sends */
    check(req: FastifyRequest) {
      const until = blockedUntil.get(req.ip);
      if (until === undefined) return;
      if (until > now()) throw refuse(until);
      blockedUntil.delete(req.ip);
    },
    /** after a 401: count it, and refuse from now on when it was one too many */
    async failed(req: FastifyRequest) {
      const decision = await limiter.hit(`auth-failures:${req.ip}`, perMinute);
      if (decision.allowed) return;
      const until = now() + decision.resetSeconds * 1000;
      blockedUntil.set(req.ip, until);
      if (blockedUntil.size > 100_000) blockedUntil.clear();
      throw refuse(until);
    },
  };
};
export type AuthFailureGate = ReturnType<typeof createAuthFailureGate>;

/**
 * `/admin/api/*` and `/metrics` take SERP_ADMIN_TOKEN as a Bearer token, compared in constant time. A wrong or
 * missing token counts against the same per-address ceiling as a bad API key (docs/security.md): past it the
 * address gets 429 with Retry-After, right token or not.
 */
export const createAdminGuard = (adminToken: string, failures: AuthFailureGate) => {
  const expected = Buffer.from(adminToken);
  return async (req: FastifyRequest) => {
    failures.check(req);
    const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
    const got = Buffer.from(m?.[1]?.trim() ?? '');
    if (got.length !== expected.length || !timingSafeEqual(got, expected)) {
      await failures.failed(req);
      throw new ApiError(
        401,
        'SERP_ADMIN_UNAUTHORIZED',
        'admin token required: Authorization: Bearer <SERP_ADMIN_TOKEN>',
      );
    }
  };
};
export type AdminGuard = ReturnType<typeof createAdminGuard>;
