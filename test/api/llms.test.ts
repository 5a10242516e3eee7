import t from 'tap';
import { SearchParameters } from '../../contracts/search.js';
import { buildTestApp } from '../support/app.js';

t.test('llms.txt › names every surface, every search parameter, the MCP setup and the schema', async (t) => {
  const { app } = await buildTestApp(t);
  const res = await app.inject({ url: '/llms.txt' });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^text\/plain/);
  const text = res.body;
  for (const field of [...Object.keys(SearchParameters.shape), 'async']) t.match(text, field, `mentions ${field}`);
  for (const needle of [
    'POST /v1/search',
    'GET /v1/search/{job_id}',
    'GET /v1/usage',
    '/search.json',
    '/searches/{id}.json',
    '/account.json',
    '/locations.json',
    'serp_search',
    'serp_get_results',
    'serp_usage',
    '/mcp',
    'serp-api-mcp',
    'SERP_API_BASE_URL',
    'SERP_API_KEY',
    '(/openapi.json)',
  ])
    t.ok(text.includes(needle), `mentions ${needle}`);
});

t.test('GET / › points a newcomer to the OpenAPI, llms.txt, the dashboard and the docs', async (t) => {
  const { app } = await buildTestApp(t);
  const json = await app.inject({ url: '/' });
  t.equal(json.statusCode, 200);
  t.match(json.headers['content-type'], /^application\/json/, 'JSON for curl and clients');
  t.match(json.json(), {
    name: 'serp-api',
    version: /^\d+\.\d+\.\d+/,
    links: { openapi: '/openapi.json', llms: '/llms.txt', admin: '/admin', health: '/health' },
    docs: { api: 'docs/api.md' },
  });
  for (const link of Object.values(json.json().links as Record<string, string>)) {
    if (link === '/mcp' || link === '/v1/search') continue; // they need a key (and /mcp a POST)
    t.not((await app.inject({ url: link })).statusCode, 404, `${link} answers`);
  }
  const html = await app.inject({ url: '/', headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
  t.equal(html.statusCode, 200);
  t.match(html.headers['content-type'], /^text\/html/, 'HTML for a browser');
  for (const href of ['/openapi.json', '/llms.txt', '/admin']) t.ok(html.body.includes(`href="${href}"`), href);
  t.match(html.headers['content-security-policy'], /default-src 'none'/, 'no script or style, under the JSON CSP');
});

t.test('GET /health › names the process (SERP_INSTANCE_ID, or one made at start)', async (t) => {
  const named = await buildTestApp(t, { SERP_INSTANCE_ID: 'clu_test/api-1' });
  t.same((await named.app.inject({ url: '/health' })).json(), { status: 'ok', instance_id: 'clu_test/api-1' });
  const unnamed = await buildTestApp(t);
  t.match((await unnamed.app.inject({ url: '/health' })).json(), { status: 'ok', instance_id: /^ins_[0-9a-f]{12}$/ });
});
