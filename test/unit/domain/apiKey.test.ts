import t from 'tap';
import { type ApiKeyEvent, apiKeyDecider } from '../../../domain/apiKey/apiKey.js';
import { deciderSpec } from '../../../domain/kernel/givenWhenThen.js';

const spec = deciderSpec(apiKeyDecider);
const now = '2026-11-21T10:00:00.000Z';
const limits = { tier: 'free', monthlyQuota: 250, rateLimitPerMin: 10 };
const issue = {
  type: 'IssueApiKey',
  keyId: 'k1',
  keyHash: 'h1',
  prefix: 'sk_abcde',
  label: 'ci',
  now,
  ...limits,
} as const;
const issued: ApiKeyEvent = {
  type: 'ApiKeyIssued',
  data: { keyId: 'k1', keyHash: 'h1', prefix: 'sk_abcde', label: 'ci', issuedAt: now, ...limits },
};
const revoked: ApiKeyEvent = { type: 'ApiKeyRevoked', data: { keyId: 'k1', revokedAt: now } };

t.test('ApiKey › issue', async (t) => {
  t.same(spec.given([]).when(issue), [issued]);
  t.same(spec.given([issued]).when(issue), [], 'the same issue again decides nothing');
  t.throws(() => spec.given([issued]).when({ ...issue, keyHash: 'other' }), { code: 'SERP_KEY_EXISTS' });
});

t.test('ApiKey › revoke', async (t) => {
  t.same(spec.given([issued]).when({ type: 'RevokeApiKey', keyId: 'k1', now }), [revoked]);
  t.same(spec.given([issued, revoked]).when({ type: 'RevokeApiKey', keyId: 'k1', now }), [], 'idempotent');
  t.throws(() => spec.given([]).when({ type: 'RevokeApiKey', keyId: 'k1', now }), { code: 'SERP_KEY_NOT_FOUND' });
  t.equal(spec.given([issued, revoked]).state().status, 'revoked');
});

t.test('ApiKey › change limits', async (t) => {
  const change = { type: 'ChangeApiKeyLimits', keyId: 'k1', now, monthlyQuota: 50, tier: 'free' } as const;
  t.same(spec.given([issued]).when(change), [
    { type: 'ApiKeyLimitsChanged', data: { keyId: 'k1', monthlyQuota: 50, changedAt: now } },
  ]);
  const changed = spec.given([issued]).when(change);
  t.same(spec.given([issued, ...changed]).when(change), [], 'no change decides nothing');
  t.same(spec.given([issued, ...changed]).state(), {
    status: 'active',
    keyId: 'k1',
    keyHash: 'h1',
    ...limits,
    monthlyQuota: 50,
  });
  t.throws(() => spec.given([issued, revoked]).when(change), { code: 'SERP_KEY_REVOKED' });
  t.throws(() => spec.given([]).when(change), { code: 'SERP_KEY_NOT_FOUND' });
});
