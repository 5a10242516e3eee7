import t from 'tap';
import { buildTestApp } from '../support/app.js';

type Op = { operationId?: string; tags?: string[]; security?: unknown[]; responses?: Record<string, unknown> };

t.test('OpenAPI › generates good clients', async (t) => {
  const { app } = await buildTestApp(t);
  const doc = (await app.inject({ url: '/openapi.json' })).json() as {
    servers?: Array<{ url: string }>;
    paths: Record<string, Record<string, Op>>;
    components: { securitySchemes: Record<string, unknown> };
  };
  t.ok(doc.servers?.length, 'servers are given');
  const ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, op })),
  );
  for (const { where, op } of ops) {
    t.match(op.operationId, /^[a-z][A-Za-z]+$/, `${where} has a camelCase operationId`);
    t.ok(op.tags?.length, `${where} has a tag`);
  }
  const ids = ops.map((o) => o.op.operationId);
  t.equal(new Set(ids).size, ids.length, 'operationIds are unique');
  t.ok(doc.components.securitySchemes.adminToken, 'the admin API has its own security scheme');
  t.same(doc.paths['/admin/api/keys']?.get?.security, [{ adminToken: [] }]);
  t.same(doc.paths['/health']?.get?.security, [], 'meta routes need no key');
});

t.test('hardening', async (t) => {
  const { app } = await buildTestApp(t);

  t.test('a known path with the wrong method › 405 with Allow and a detail', async (t) => {
    const res = await app.inject({ method: 'DELETE', url: '/v1/search' });
    t.equal(res.statusCode, 405);
    t.equal(res.headers.allow, 'POST');
    t.match(res.json(), { detail: /DELETE is not allowed here: use POST/, code: 'SERP_API_METHOD_NOT_ALLOWED' });
    const poll = await app.inject({ method: 'POST', url: '/v1/search/abc' });
    t.equal(poll.statusCode, 405);
    t.equal(poll.headers.allow, 'GET, HEAD');
  });

  t.test('a JSON content type with no body › no body on a DELETE, a 400 with a detail elsewhere', async (t) => {
    const built = await buildTestApp(t);
    const headers = { 'content-type': 'application/json', 'x-api-key': await built.mintKey('pro') };
    const del = await built.app.inject({ method: 'DELETE', url: '/v1/webhooks/wh_nothere', headers });
    t.equal(del.statusCode, 404, 'the DELETE reaches its route (an unknown webhook), not a body error');
    t.match(del.json(), { code: 'SERP_WEBHOOK_NOT_FOUND' });
    const post = await built.app.inject({ method: 'POST', url: '/v1/search', headers });
    t.equal(post.statusCode, 400, 'a POST still needs its body');
    t.match(post.json(), { detail: /the JSON body is empty/, code: 'SERP_API_INVALID_JSON' });
    const junk = await built.app.inject({
      method: 'DELETE',
      url: '/v1/webhooks/wh_nothere',
      headers,
      payload: '{nope',
    });
    t.equal(junk.statusCode, 400, 'a DELETE with a body that is not JSON is still refused');
  });

  t.test('messages name the real cause', async (t) => {
    const built = await buildTestApp(t);
    const headers = { 'content-type': 'application/json', 'x-api-key': await built.mintKey('pro') };
    const proto = await built.app.inject({
      method: 'POST',
      url: '/v1/search',
      headers,
      payload: '{"keyword":"coffee","__proto__":{"admin":true}}',
    });
    t.equal(proto.statusCode, 400, 'a __proto__ key is refused');
    t.match(
      proto.json(),
      { detail: /^the body is valid JSON but has a "__proto__" key/, code: 'SERP_API_FORBIDDEN_KEY' },
      'as valid JSON refused for its key, not as JSON that does not parse',
    );
    const ctor = await built.app.inject({
      method: 'POST',
      url: '/v1/search',
      headers,
      payload: '{"keyword":"coffee","constructor":{"prototype":{}}}',
    });
    t.match(ctor.json(), { code: 'SERP_API_FORBIDDEN_KEY' }, 'and so is constructor.prototype');
    const priority = await built.app.inject({
      method: 'POST',
      url: '/v1/search',
      headers,
      payload: { keyword: 'coffee', priority: 'urgent' },
    });
    t.equal(priority.statusCode, 422);
    t.match(priority.json().detail, /^priority must be "live"/, 'a message that names its field is not prefixed again');
    const depth = await built.app.inject({
      method: 'POST',
      url: '/v1/search',
      headers,
      payload: { keyword: 'coffee', depth: 'x' },
    });
    t.match(depth.json().detail, /^depth must be a number of results/, 'nor depth\'s (it said "depth: depth must …")');
  });

  t.test('an unknown path › 404 whose detail does not echo a huge path', async (t) => {
    const res = await app.inject({ url: `/nowhere/${'x'.repeat(5000)}` });
    t.equal(res.statusCode, 404);
    t.ok(res.body.length < 400, `a short body (${res.body.length} bytes)`);
    t.match(res.json(), { detail: /no route for GET \/nowhere\/x+…/ });
  });

  t.test('security headers on every answer, JSON and errors alike', async (t) => {
    for (const url of ['/health', '/v1/usage', '/nowhere']) {
      const res = await app.inject({ url });
      t.match(res.headers['content-security-policy'], /default-src 'none'/, url);
      t.equal(res.headers['x-content-type-options'], 'nosniff', url);
      t.ok(res.headers['x-frame-options'], url);
    }
  });

  t.test('key guessing › past the per-IP ceiling of failures every request is 429, even with a good key', async (t) => {
    const built = await buildTestApp(t, { SERP_AUTH_FAILURES_PER_MIN: '5' });
    const fresh = built.app;
    const key = await built.mintKey('pro');
    const codes: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await fresh.inject({ url: '/v1/usage', headers: { 'x-api-key': `sk_guess${i}` } });
      codes.push(res.statusCode);
    }
    t.same(codes, [401, 401, 401, 401, 401, 429, 429]);
    const good = await fresh.inject({ url: '/v1/usage', headers: { 'x-api-key': key } });
    t.equal(good.statusCode, 429, 'a good key from the same address waits too');
    t.ok(Number(good.headers['retry-after']) >= 1, 'with Retry-After');
    const other = await fresh.inject({ url: '/v1/usage', headers: { 'x-api-key': key }, remoteAddress: '10.0.0.9' });
    t.equal(other.statusCode, 200, 'another address is not affected');
  });

  t.test('engine_domain › www. forms of Google domains are accepted', async (t) => {
    const built = await buildTestApp(t);
    const fresh = built.app;
    const key = await built.mintKey('pro');
    const res = await fresh.inject({
      method: 'POST',
      url: '/v1/search',
      headers: { 'x-api-key': key },
      payload: { keyword: 'coffee', engine_domain: 'www.google.co.uk' },
    });
    t.equal(res.statusCode, 202, res.body);
    const bad = await fresh.inject({
      method: 'POST',
      url: '/v1/search',
      headers: { 'x-api-key': key },
      payload: { keyword: 'coffee', engine_domain: 'www.example.com' },
    });
    t.equal(bad.statusCode, 422);
  });
});
