import type { Projection } from '../projection.js';

/** Never holds a raw key: only its HMAC, looked up by `lookupOf`. */
export interface ApiKeyDoc {
  keyId: string;
  keyHash: string;
  prefix: string;
  label?: string;
  tier: string;
  monthlyQuota: number;
  rateLimitPerMin: number;
  status: 'active' | 'revoked';
  issuedAt: string;
  revokedAt?: string;
}

export const apiKeysProjection: Projection<ApiKeyDoc> = {
  name: 'apiKeys',
  idOf: (e) =>
    e.type === 'ApiKeyIssued' || e.type === 'ApiKeyRevoked' || e.type === 'ApiKeyLimitsChanged'
      ? e.data.keyId
      : undefined,
  lookupOf: (doc) => doc.keyHash,
  evolve(doc, e) {
    switch (e.type) {
      case 'ApiKeyIssued': {
        const { keyId, keyHash, prefix, label, tier, monthlyQuota, rateLimitPerMin, issuedAt } = e.data;
        return { keyId, keyHash, prefix, label, tier, monthlyQuota, rateLimitPerMin, status: 'active', issuedAt };
      }
      case 'ApiKeyRevoked':
        return doc ? { ...doc, status: 'revoked', revokedAt: e.data.revokedAt } : null;
      case 'ApiKeyLimitsChanged': {
        if (!doc) return null;
        const { tier, monthlyQuota, rateLimitPerMin } = e.data;
        return {
          ...doc,
          tier: tier ?? doc.tier,
          monthlyQuota: monthlyQuota ?? doc.monthlyQuota,
          rateLimitPerMin: rateLimitPerMin ?? doc.rateLimitPerMin,
        };
      }
      default:
        return doc ?? null;
    }
  },
};
