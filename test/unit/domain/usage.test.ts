import t from 'tap';
import { deciderSpec } from '../../../domain/kernel/givenWhenThen.js';
import { type UsageEvent, usageDecider, usageMonth, usedOf } from '../../../domain/usage/usage.js';

const spec = deciderSpec(usageDecider);
const now = '2026-11-21T10:00:00.000Z';
const reserved = (jobId: string): UsageEvent => ({
  type: 'QuotaReserved',
  data: { keyId: 'k1', month: '202611', jobId, reservedAt: now },
});
const released = (jobId: string): UsageEvent => ({
  type: 'QuotaReleased',
  data: { keyId: 'k1', month: '202611', jobId, reason: 'crawl failed', releasedAt: now },
});
const reserve = (jobId: string, monthlyQuota = 2) =>
  ({ type: 'ReserveQuota', keyId: 'k1', month: '202611', jobId, monthlyQuota, now }) as const;
const release = (jobId: string) =>
  ({ type: 'ReleaseQuota', keyId: 'k1', month: '202611', jobId, reason: 'crawl failed', now }) as const;

t.test('Usage › when quota is left › reserves it for the job', async (t) => {
  t.same(spec.given([]).when(reserve('j1')), [reserved('j1')]);
});

t.test('Usage › when the job already holds a reservation › decides nothing (retried submit)', async (t) => {
  t.same(spec.given([reserved('j1')]).when(reserve('j1')), []);
});

t.test('Usage › when the quota is used up › refuses with monthly quota exceeded', async (t) => {
  t.throws(() => spec.given([reserved('j1'), reserved('j2')]).when(reserve('j3')), {
    code: 'SERP_QUOTA_EXCEEDED',
    message: 'monthly quota exceeded',
  });
});

t.test('Usage › a released reservation frees its unit', async (t) => {
  t.same(spec.given([reserved('j1'), reserved('j2'), released('j2')]).when(reserve('j3')), [reserved('j3')]);
  t.equal(usedOf(spec.given([reserved('j1'), reserved('j2'), released('j2')]).state()), 1);
});

t.test('Usage › a quota of 0 is unlimited', async (t) => {
  const many = Array.from({ length: 500 }, (_, i) => reserved(`j${i}`));
  t.same(spec.given(many).when(reserve('jx', 0)), [reserved('jx')]);
});

t.test('Usage › release', async (t) => {
  t.test('releases a held reservation once', async (t) => {
    t.same(spec.given([reserved('j1')]).when(release('j1')), [released('j1')]);
  });
  t.test('ignores a second release (redelivered failure)', async (t) => {
    t.same(spec.given([reserved('j1'), released('j1')]).when(release('j1')), []);
  });
  t.test('ignores a job that never reserved', async (t) => {
    t.same(spec.given([]).when(release('j9')), []);
  });
});

t.test('usageMonth › is the UTC calendar month', async (t) => {
  t.equal(usageMonth('2026-12-31T23:59:59.999Z'), '202612');
  t.equal(usageMonth('2027-01-01T00:00:00.000Z'), '202701');
});
