import t from 'tap';
import type { ApiKeyDoc } from '../../projections/apiKeys/apiKeys.js';
import { KeyView, keyView } from '../../services/api/keyView.js';

/**
 * A key as the admin API and `serp-api keys list` show it (docs/operations.md, docs/security.md): its id, prefix,
 * limits and status, never its HMAC.
 */
t.test('key view › what an operator sees of a key', async (t) => {
  const doc: ApiKeyDoc = {
    keyId: 'key_a',
    keyHash: 'f'.repeat(64),
    prefix: 'sk_live_',
    label: 'ci',
    tier: 'pro',
    monthlyQuota: 5000,
    rateLimitPerMin: 60,
    status: 'revoked',
    issuedAt: '2026-12-01T00:00:00.000Z',
    revokedAt: '2026-12-07T00:00:00.000Z',
  };
  const view = keyView(doc);
  t.same(
    view,
    {
      key_id: 'key_a',
      prefix: 'sk_live_',
      label: 'ci',
      tier: 'pro',
      monthly_quota: 5000,
      rate_limit_per_min: 60,
      status: 'revoked',
      issued_at: '2026-12-01T00:00:00.000Z',
      revoked_at: '2026-12-07T00:00:00.000Z',
    },
    'in the API’s snake case',
  );
  t.notOk(JSON.stringify(view).includes(doc.keyHash), 'the key’s HMAC is never shown');
  t.ok(KeyView.safeParse(view).success, 'and it is what the admin API documents');
});
