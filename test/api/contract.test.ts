import t from 'tap';
import { buildTestApp } from '../support/app.js';
import { fixturesMissing } from '../support/fixtures.js';
import {
  createOpenApiValidator,
  type OpenApiDoc,
  type OpenApiValidator,
  responsePointer,
} from '../support/openapiValidator.js';

/**
 * The live contract, route by route: every route Fastify has is in /openapi.json, and every answer it gives (the
 * happy ones and the errors: 400/401/403/404/410/413/415/422/429…) has a status, a content type and a body that the
 * document declares for that operation. Requests go over HTTP to a listening server. Routes added later (monitors,
 * webhooks) are covered without editing this file: they must be documented, and the generic probes below (no
 * credentials, a wrong content type, a body too large, unknown ids) run against every route.
 */
const missing = fixturesMissing();

/** Fastify's `/v1/search/:job_id` as OpenAPI writes it: `/v1/search/{job_id}`. */
const openapiPath = (url: string) => url.replace(/:([A-Za-z_]\w*)/g, '{$1}');

interface Answer {
  status: number;
  type: string;
  body: string;
}

/** What a response breaks in the contract of `method path`: an undocumented status, content type or body. */
const breaches = (openapi: OpenApiValidator, method: string, path: string, res: Answer): string[] => {
  const op = openapi.doc.paths[path]?.[method];
  if (!op) return [`${method.toUpperCase()} ${path} is not documented`];
  const status = String(res.status);
  const declared = op.responses[status] ?? op.responses.default;
  if (!declared) return [`${method.toUpperCase()} ${path} answered ${status}, not documented`];
  if (res.status === 204 || res.status === 304 || res.body === '') return [];
  const media = res.type.split(';')[0]!.trim();
  const content = declared.content ?? {};
  if (!(media in content)) {
    return [
      `${method.toUpperCase()} ${path} ${status} sent ${media || 'no type'}, documented: ${Object.keys(content)}`,
    ];
  }
  if (media !== 'application/json') return [];
  let value: unknown;
  try {
    value = JSON.parse(res.body);
  } catch {
    return [`${method.toUpperCase()} ${path} ${status} sent invalid JSON`];
  }
  const key = op.responses[status] ? status : 'default';
  return openapi
    .validate(responsePointer(path, method, key, media), value)
    .map((e) => `${method.toUpperCase()} ${path} ${status}: ${e}`);
};

t.test('every route is documented, and every answer matches its documentation', { skip: missing }, async (t) => {
  const routes: Array<{ method: string; url: string }> = [];
  const { app, mintKey, core } = await buildTestApp(
    t,
    {},
    {
      onRoute: (r) => {
        for (const m of [r.method].flat()) if (m !== 'HEAD') routes.push({ method: m.toLowerCase(), url: r.url });
      },
    },
  );
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const doc = (await (await fetch(`${base}/openapi.json`)).json()) as OpenApiDoc;
  const openapi = createOpenApiValidator(doc);

  t.test('every route Fastify serves is in /openapi.json', async (t) => {
    const undocumented = routes.filter((r) => !doc.paths[openapiPath(r.url)]?.[r.method]);
    t.same(
      undocumented.map((r) => `${r.method.toUpperCase()} ${r.url}`),
      [],
      `${routes.length} routes`,
    );
  });

  const key = await mintKey('pro');
  const slow = await mintKey('free', { rateLimitPerMin: 1 });
  const admin = core.secrets.adminToken;
  const seen: string[] = [];
  const problems: string[] = [];
  const call = async (
    method: string,
    url: string,
    route: string,
    init: { headers?: Record<string, string>; body?: string } = {},
  ): Promise<Answer> => {
    const res = await fetch(`${base}${url}`, { method: method.toUpperCase(), redirect: 'manual', ...init });
    const answer = { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() };
    seen.push(`${method} ${route} ${answer.status}`);
    problems.push(...breaches(openapi, method, route, answer));
    return answer;
  };
  const json = (k: string, body: unknown) => ({
    headers: { 'content-type': 'application/json', 'x-api-key': k },
    body: JSON.stringify(body),
  });
  const asAdmin = { headers: { authorization: `Bearer ${admin}` } };

  t.test('the answers of the known routes, errors included', async (t) => {
    await call('get', '/health', '/health');
    await call('get', '/', '/');
    await call('get', '/', '/', { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    await call('get', '/openapi.json', '/openapi.json');
    await call('get', '/llms.txt', '/llms.txt');
    await call('get', '/metrics', '/metrics');
    await call('get', '/metrics', '/metrics', asAdmin);
    // native
    const submitted = await call('post', '/v1/search', '/v1/search', json(key, { keyword: 'contract coffee' }));
    const jobId = (JSON.parse(submitted.body) as { job_id: string }).job_id;
    await call('post', '/v1/search', '/v1/search', json(key, { keyword: 'x', location: 'Nowhere, Texas' }));
    await call('post', '/v1/search', '/v1/search', json(key, { keyword: '' }));
    await call('post', '/v1/search', '/v1/search', { ...json(key, {}), body: '{not json' });
    await call('post', '/v1/search', '/v1/search', {
      headers: { 'x-api-key': key, 'content-type': 'text/plain' },
      body: 'x',
    });
    await call('post', '/v1/search', '/v1/search', {
      ...json(key, {}),
      body: JSON.stringify({ keyword: 'x'.repeat(1_200_000) }),
    });
    await call('post', '/v1/search', '/v1/search', json('nope', { keyword: 'x' }));
    await call('post', '/v1/search', '/v1/search', json(slow, { keyword: 'slow 1' }));
    await call('post', '/v1/search', '/v1/search', json(slow, { keyword: 'slow 2' }));
    const k = { headers: { 'x-api-key': key } };
    await call('get', `/v1/search/${jobId}`, '/v1/search/{job_id}', k);
    await call('get', `/v1/search/${jobId}?output=compat`, '/v1/search/{job_id}', k);
    await call('get', `/v1/search/${jobId}?output=nonsense`, '/v1/search/{job_id}', k);
    await call('get', '/v1/search/0123456789abcdef01234567', '/v1/search/{job_id}', k);
    await call('get', '/v1/usage', '/v1/usage', k);
    await call('get', '/v1/usage', '/v1/usage');
    // raw links: missing, bad and expired signatures
    await call('get', `/raw/${jobId}`, '/raw/{job_id}');
    await call('get', `/raw/${jobId}?expires=${Math.floor(Date.now() / 1000) + 60}&signature=bad`, '/raw/{job_id}');
    await call('get', `/raw/${jobId}?expires=1&signature=bad`, '/raw/{job_id}');
    // compat
    await call('get', `/search?q=contract+tea&api_key=${key}&async=true`, '/search');
    await call('get', `/search.json?q=contract+tea&api_key=${key}&location=Austin,+TX&async=true`, '/search.json');
    await call('get', `/search?q=x&api_key=${key}&location=Nowhere,+Texas`, '/search');
    await call('get', `/search?q=x&api_key=${key}&engine=bing`, '/search');
    await call('get', '/search?q=x&api_key=wrong', '/search');
    await call('get', `/searches/${jobId}.json?api_key=${key}`, '/searches/{search_id}');
    await call('get', `/searches/0123456789abcdef01234567.json?api_key=${key}`, '/searches/{search_id}');
    await call('get', `/account?api_key=${key}`, '/account');
    await call('get', `/account.json?api_key=${key}`, '/account.json');
    await call('get', '/account', '/account');
    await call('get', '/locations.json', '/locations.json');
    await call('get', '/locations.json?q=Austin&limit=3', '/locations.json');
    await call('get', '/locations.json?limit=0', '/locations.json');
    // mcp
    const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'contract', version: '1' } },
    };
    await call('post', '/mcp', '/mcp', { headers: { ...mcpHeaders, 'x-api-key': key }, body: JSON.stringify(init) });
    await call('post', '/mcp', '/mcp', { headers: mcpHeaders, body: JSON.stringify(init) });
    await call('get', '/mcp', '/mcp', { headers: { accept: 'text/event-stream', 'x-api-key': key } });
    await call('delete', '/mcp', '/mcp', { headers: { 'x-api-key': key, 'mcp-session-id': 'none' } });
    // admin
    await call('get', '/admin', '/admin');
    await call('get', '/admin/assets/dashboard.js', '/admin/assets/{name}');
    await call('get', '/admin/assets/nothing.exe', '/admin/assets/{name}');
    await call('get', '/admin/api/keys', '/admin/api/keys');
    await call('get', '/admin/api/keys', '/admin/api/keys', asAdmin);
    await call('get', '/admin/api/tiers', '/admin/api/tiers', asAdmin);
    await call('get', '/admin/api/service', '/admin/api/service', asAdmin);
    const created = await call('post', '/admin/api/keys', '/admin/api/keys', {
      headers: { ...asAdmin.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'free' }),
    });
    const keyId = (JSON.parse(created.body) as { key_id?: string; keyId?: string }).key_id ?? 'k';
    await call('post', '/admin/api/keys', '/admin/api/keys', {
      headers: { ...asAdmin.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'no such tier' }),
    });
    await call('get', `/admin/api/keys/${keyId}/usage`, '/admin/api/keys/{key_id}/usage', asAdmin);
    await call('get', `/admin/api/keys/${keyId}/jobs`, '/admin/api/keys/{key_id}/jobs', asAdmin);
    // the monitor view: a monitor of that key, its chart's points and its summary (no run has been searched yet)
    const rawKey = (JSON.parse(created.body) as { key?: string }).key ?? 'k';
    const monitor = await call(
      'post',
      '/v1/monitors',
      '/v1/monitors',
      json(rawKey, { name: 'contract', keywords: ['contract tea'], domains: ['example.com'], schedule: 'weekly' }),
    );
    const monitorId = (JSON.parse(monitor.body) as { monitor_id?: string }).monitor_id ?? 'm';
    await call('get', `/admin/api/keys/${keyId}/monitors`, '/admin/api/keys/{key_id}/monitors', asAdmin);
    await call('get', '/admin/api/keys/nokey/monitors', '/admin/api/keys/{key_id}/monitors', asAdmin);
    const positions = '/admin/api/monitors/{monitor_id}/positions';
    await call('get', `/admin/api/monitors/${monitorId}/positions`, positions, asAdmin);
    await call('get', `/admin/api/monitors/${monitorId}/positions?keyword=x&days=7`, positions, asAdmin);
    await call('get', `/admin/api/monitors/${monitorId}/positions?days=0`, positions, asAdmin);
    await call('get', '/admin/api/monitors/mon_none/positions', positions, asAdmin);
    const summary = '/admin/api/monitors/{monitor_id}/summary';
    await call('get', `/admin/api/monitors/${monitorId}/summary`, summary, asAdmin);
    await call('get', `/admin/api/monitors/${monitorId}/summary?days=x`, summary, asAdmin);
    await call('get', '/admin/api/monitors/mon_none/summary', summary);
    await call('patch', `/admin/api/keys/${keyId}`, '/admin/api/keys/{key_id}', {
      headers: { ...asAdmin.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ rate_limit_per_min: 5 }),
    });
    await call('post', `/admin/api/keys/${keyId}/revoke`, '/admin/api/keys/{key_id}/revoke', asAdmin);
    await call('post', '/admin/api/keys/nokey/revoke', '/admin/api/keys/{key_id}/revoke', asAdmin);
    await call('post', '/admin/session', '/admin/session', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'token=wrong',
    });
    await call('post', '/admin/session/end', '/admin/session/end', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    for (const status of ['200', '202', '400', '401', '404', '413', '415', '422', '429']) {
      t.ok(
        seen.some((s) => s.endsWith(` ${status}`)),
        `answers ${status} were exercised`,
      );
    }
  });

  t.test('generic probes on every route (routes added later included)', async (t) => {
    const answered: { route: string; status: number }[] = [];
    for (const { method, url } of routes) {
      const path = url.replace(/:[A-Za-z_]\w*/g, '0123456789abcdef01234567');
      const route = openapiPath(url);
      const probe = async (...init: [] | [{ headers?: Record<string, string>; body?: string }]) => {
        const { status } = await call(method, path, route, ...init);
        answered.push({ route: `${method.toUpperCase()} ${route}`, status });
      };
      // no credentials at all
      await probe();
      // a key, but unknown ids
      await probe({ headers: { 'x-api-key': key, authorization: `Bearer ${admin}` } });
      if (method === 'post' || method === 'patch' || method === 'put') {
        const auth = { 'x-api-key': key, authorization: `Bearer ${admin}` };
        await probe({ headers: { ...auth, 'content-type': 'text/csv' }, body: 'a,b' });
        await probe({ headers: { ...auth, 'content-type': 'application/json' }, body: '{' });
        await probe({
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ padding: 'x'.repeat(1_200_000) }),
        });
      }
    }
    const every = new Set(routes.map((r) => `${r.method.toUpperCase()} ${openapiPath(r.url)}`));
    t.same(new Set(answered.map((a) => a.route)), every, `all ${every.size} routes probed`);
    t.same(
      answered.filter((a) => a.status >= 500),
      [],
      `no probe of ${answered.length} got a 5xx (the contract itself is checked below)`,
    );
  });

  t.test('no answer broke the contract', async (t) => {
    t.same([...new Set(problems)], [], `${seen.length} answers checked`);
  });
});
