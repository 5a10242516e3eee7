import type { FastifyRequest } from 'fastify';
import type { ApiKeyDoc } from '../../projections/apiKeys/apiKeys.js';
import type { ReadModelStore } from '../adapters/readModel/sqlite.js';
import { hashKey } from '../application/keys.js';
import { ApiError } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey?: ApiKeyDoc;
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
 */
export const createAuthenticator = (readModels: ReadModelStore, pepper: string) => {
  return (req: FastifyRequest, allowQuery = false): ApiKeyDoc => {
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
    const doc = raw.length <= 128 ? readModels.findByLookup<ApiKeyDoc>('apiKeys', hashKey(raw, pepper)) : undefined;
    if (!doc) throw new ApiError(401, 'SERP_AUTH_INVALID_KEY', 'invalid API key');
    if (doc.status !== 'active') throw new ApiError(401, 'SERP_AUTH_REVOKED_KEY', 'this API key has been revoked');
    req.apiKey = doc;
    return doc;
  };
};
export type Authenticator = ReturnType<typeof createAuthenticator>;
