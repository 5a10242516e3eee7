import { z } from 'zod';
import type { ApiKeyDoc } from '../../projections/apiKeys/apiKeys.js';

/**
 * An API key as the admin API and `serp-api keys` show it: outside the route plugin, so the CLI reads the same view
 * without importing a route (docs/architecture.md#folders).
 */
export const KeyView = z.object({
  key_id: z.string(),
  prefix: z.string(),
  label: z.string().optional(),
  tier: z.string(),
  monthly_quota: z.number().int(),
  rate_limit_per_min: z.number().int(),
  status: z.enum(['active', 'revoked']),
  issued_at: z.string(),
  revoked_at: z.string().optional(),
});

export const keyView = (d: ApiKeyDoc): z.infer<typeof KeyView> => ({
  key_id: d.keyId,
  prefix: d.prefix,
  label: d.label,
  tier: d.tier,
  monthly_quota: d.monthlyQuota,
  rate_limit_per_min: d.rateLimitPerMin,
  status: d.status,
  issued_at: d.issuedAt,
  revoked_at: d.revokedAt,
});
