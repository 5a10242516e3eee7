import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { cli, startStack, submit } from '../support/service.js';

const missing = fixturesMissing();

t.test('200 simultaneous submits on a key with 50 searches left accept exactly 50', { skip: missing }, async (t) => {
  const { data, svc, mintKey } = await startStack(t, { env: { SERP_CRAWLER_CONCURRENCY: '4' } });
  const created = await mintKey(['--tier', 'starter', '--quota', '50', '--rate', '100000']);
  const key: string = created.key;

  const responses = await Promise.all(
    Array.from({ length: 200 }, (_, i) => submit(svc.url, key, { keyword: `concurrent search ${i}` })),
  );
  const bodies = await Promise.all(responses.map((r) => r.json() as Promise<{ detail?: string; job_id?: string }>));
  const statuses = responses.map((r) => r.status);
  t.equal(statuses.filter((s) => s === 202).length, 50, 'exactly 50 accepted');
  t.equal(statuses.filter((s) => s === 429).length, 150, 'the rest refused');
  t.ok(
    bodies.every((b, i) => statuses[i] === 202 || b.detail === 'monthly quota exceeded'),
    'with detail "monthly quota exceeded"',
  );
  t.ok(
    responses.every((r) => r.status === 202 || Number(r.headers.get('retry-after')) > 0),
    'and a Retry-After until the quota comes back (the first of next month)',
  );
  t.equal(new Set(bodies.map((b) => b.job_id).filter(Boolean)).size, 50, 'fifty distinct jobs');

  const usage = (await (await fetch(`${svc.url}/v1/usage`, { headers: { 'x-api-key': key } })).json()) as Record<
    string,
    number
  >;
  t.match(usage, { monthly_quota: 50, used_this_month: 50, remaining: 0 });

  const month = new Date().toISOString().slice(0, 7);
  const audit = JSON.parse(
    await cli(['audit', 'usage', '--month', month, '--key', created.key_id, '--json', '--data', data]),
  );
  t.equal(audit.length, 1);
  t.match(audit[0], { reserved: 50, released: 0, charged: 50, projected: 50 }, 'audit usage agrees with /v1/usage');
  t.same(audit[0].discrepancies, [], 'no discrepancy');
});
