import t from 'tap';
import { buildTestApp } from '../support/app.js';

t.test('HTTP app › each scope has one guard for all its routes', async (t) => {
  const { app, core, mintKey } = await buildTestApp(t);
  const key = await mintKey();
  const v1 = [
    { method: 'POST' as const, url: '/v1/search', payload: { keyword: 'coffee' } },
    { method: 'GET' as const, url: '/v1/search/0123456789abcdef01234567?output=json' },
    { method: 'GET' as const, url: '/v1/search/0123456789abcdef01234567/screenshot' },
    { method: 'GET' as const, url: '/v1/usage' },
  ];
  await t.test('/v1 › no key is a 401 on every route, a key passes', async (t) => {
    for (const r of v1) {
      const res = await app.inject(r);
      t.equal(res.statusCode, 401, `${r.method} ${r.url} without a key`);
      t.match(res.json(), { code: 'SERP_AUTH_MISSING_KEY', detail: /X-API-Key/ });
      const ok = await app.inject({ ...r, headers: { 'x-api-key': key } });
      t.not(ok.statusCode, 401, `${r.method} ${r.url} with a key: ${ok.statusCode}`);
    }
  });

  const admin = [
    { method: 'GET' as const, url: '/admin/api/keys' },
    { method: 'POST' as const, url: '/admin/api/keys', payload: { tier: 'free' } },
    { method: 'POST' as const, url: '/admin/api/keys/key_0/revoke' },
    { method: 'PATCH' as const, url: '/admin/api/keys/key_0', payload: { rate_limit_per_min: 5 } },
    { method: 'GET' as const, url: '/admin/api/keys/key_0/usage' },
    { method: 'GET' as const, url: '/admin/api/keys/key_0/jobs' },
    { method: 'GET' as const, url: '/admin/api/service' },
    { method: 'GET' as const, url: '/admin/api/tiers' },
    { method: 'GET' as const, url: '/admin/api/keys/key_0/monitors' },
    { method: 'GET' as const, url: '/admin/api/monitors/mon_0/positions' },
    { method: 'GET' as const, url: '/admin/api/monitors/mon_0/summary' },
    { method: 'GET' as const, url: '/admin/api/jobs/0123456789abcdef01234567/screenshot' },
    { method: 'GET' as const, url: '/admin/api/jobs/0123456789abcdef01234567/positions' },
  ];
  await t.test('/admin › an API key is not the admin token; the token passes', async (t) => {
    for (const r of admin) {
      const res = await app.inject({ ...r, headers: { authorization: `Bearer ${key}` } });
      t.equal(res.statusCode, 401, `${r.method} ${r.url} with a user key`);
      t.match(res.json(), { code: 'SERP_ADMIN_UNAUTHORIZED' });
      const ok = await app.inject({ ...r, headers: { authorization: `Bearer ${core.secrets.adminToken}` } });
      t.not(ok.statusCode, 401, `${r.method} ${r.url} with the admin token: ${ok.statusCode}`);
    }
  });

  await t.test('meta routes need nothing', async (t) => {
    for (const url of ['/', '/health', '/openapi.json', '/llms.txt']) {
      t.equal((await app.inject({ url })).statusCode, 200, url);
    }
  });
});

t.test('HTTP app › submissions and reads count against their own ceilings', async (t) => {
  const { app, mintKey } = await buildTestApp(t);
  const key = await mintKey('free', { rateLimitPerMin: 2 });
  const headers = { 'x-api-key': key };
  const submit = () => app.inject({ method: 'POST', url: '/v1/search', headers, payload: { keyword: 'tea' } });
  const first = await submit();
  t.equal(first.statusCode, 202, 'first submission');
  t.equal(first.headers['ratelimit-remaining'], '1', 'a submission carries the rate headers');
  t.equal((await submit()).statusCode, 202, 'second submission');
  const third = await submit();
  t.equal(third.statusCode, 429, 'the third in the minute is refused');
  t.match(third.json(), { detail: 'rate limit exceeded' });
  t.ok(Number(third.headers['retry-after']) >= 1, 'with Retry-After');
  const bad = await app.inject({ method: 'POST', url: '/v1/search', headers, payload: { keyword: '' } });
  t.equal(bad.statusCode, 422, 'a refused body is judged before the rate (it is not a submission)');
  const usage = await app.inject({ url: '/v1/usage', headers });
  t.equal(usage.statusCode, 200, 'reads are not held by the submission rate');
  t.equal(usage.headers['ratelimit-remaining'], undefined, 'and carry no submission headers');
});

t.test('HTTP app › the OpenAPI document lists every route: native, compat, mcp, admin and meta', async (t) => {
  const { app } = await buildTestApp(t);
  const doc = (await app.inject({ url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
  t.same(Object.keys(doc.paths).sort(), [
    '/',
    '/account',
    '/account.json',
    '/admin',
    '/admin/api/jobs/{job_id}/positions',
    '/admin/api/jobs/{job_id}/screenshot',
    '/admin/api/keys',
    '/admin/api/keys/{key_id}',
    '/admin/api/keys/{key_id}/jobs',
    '/admin/api/keys/{key_id}/monitors',
    '/admin/api/keys/{key_id}/revoke',
    '/admin/api/keys/{key_id}/usage',
    '/admin/api/monitors/{monitor_id}/positions',
    '/admin/api/monitors/{monitor_id}/summary',
    '/admin/api/service',
    '/admin/api/tiers',
    '/admin/assets/{name}',
    '/admin/session',
    '/admin/session/end',
    '/health',
    '/llms.txt',
    '/locations.json',
    '/mcp',
    '/metrics',
    '/openapi.json',
    '/raw/{job_id}',
    '/search',
    '/search.json',
    '/searches/{search_id}',
    '/v1/monitors',
    '/v1/monitors/{monitor_id}',
    '/v1/monitors/{monitor_id}/alerts',
    '/v1/monitors/{monitor_id}/changes',
    '/v1/monitors/{monitor_id}/history',
    '/v1/monitors/{monitor_id}/runs',
    '/v1/monitors/{monitor_id}/visibility',
    '/v1/search',
    '/v1/search/{job_id}',
    '/v1/search/{job_id}/screenshot',
    '/v1/usage',
    '/v1/webhooks',
    '/v1/webhooks/{webhook_id}',
    '/v1/webhooks/{webhook_id}/deliveries',
    '/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry',
    '/v1/webhooks/{webhook_id}/replay',
    '/v1/webhooks/{webhook_id}/rotate-secret',
  ]);
  t.ok(doc.paths['/v1/search'].post, 'submit');
  t.ok(doc.paths['/v1/search/{job_id}'].get, 'fetch');
});
