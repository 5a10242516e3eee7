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
