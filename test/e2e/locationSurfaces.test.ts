import https from 'node:https';
import net from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { config, getJson, getJsonBySearchId } from 'serpapi';
import t from 'tap';
import { ONE_PAGE } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { startProxies } from '../support/proxies.js';
import { pollJob, startStack, submit } from '../support/service.js';
import { startReceiver, WEBHOOK_ENV } from '../support/webhookReceiver.js';

/**
 * A search Google places elsewhere on every route, through each surface's own client
 * (docs/locations.md#what-each-surface-answers): SerpApi's npm client gets SerpApi's failed-search document (no
 * results to record a position from), the MCP SDK a failed tool result, a `standardwebhooks` receiver a
 * `search.completed` with the failure's fields and no results; its pages stay readable on /v1 (`partial`) and through
 * the raw HTML link, and its quota is given back.
 */
const localAgent = (url: string) => {
  const { hostname, port } = new URL(url);
  class LocalAgent extends https.Agent {
    override createConnection() {
      return net.connect({ host: hostname, port: Number(port) });
    }
  }
  return new LocalAgent();
};

type Json = Record<string, any>;

const ASKED = /not in "Austin,Texas,United States"/;
const PLACED = /Google placed this search in "Chicago, Illinois"/;

t.test('a search placed elsewhere on every route, on every surface', { skip: fixturesMissing() }, async (t) => {
  const proxies = await startProxies(2);
  t.teardown(() => proxies.close());
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const { svc, mintKey } = await startStack(t, {
    google: {
      ...ONE_PAGE,
      placement: {
        homes: Object.fromEntries(proxies.addresses.map((a) => [a, { name: 'Chicago, Illinois', share: 1 }])),
      },
    },
    env: { ...WEBHOOK_ENV, SERP_PROXY_URLS: proxies.urls.join(',') },
  });
  const { key } = await mintKey(['--tier', 'pro']);
  const headers = { 'x-api-key': key };
  const hook = (await (
    await fetch(`${svc.url}/v1/webhooks`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${receiver.origin}/hook`, events: ['search.completed'] }),
    })
  ).json()) as { secret: string };
  receiver.setSecrets('/hook', [hook.secret]);
  config.requestOptions = { agent: localAgent(svc.url) };
  config.timeout = 60_000;
  t.teardown(() => {
    config.requestOptions = {};
  });
  const used = async () =>
    ((await (await fetch(`${svc.url}/account.json?api_key=${key}`)).json()) as Json).this_month_usage as number;

  const rejected = await getJson({ engine: 'google', q: 'elsewhere compat', location: 'Austin, Texas', api_key: key })
    .then(() => undefined)
    .catch((e: unknown) => String(e));
  const compat = JSON.parse(rejected ?? '{}') as Json;
  const compatId = compat.search_metadata?.id as string;

  t.test('npm serpapi › getJson rejects with SerpApi’s Error document, no position to record', async (t) => {
    t.ok(rejected, 'the client did not resolve with a result');
    t.match(compat.search_metadata, { status: 'Error', raw_html_file: new RegExp(`^${svc.url}/raw/`) });
    t.match(compat.error, PLACED);
    t.match(compat.error, ASKED);
    t.notOk(compat.organic_results, 'no organic results');
    t.match(compat.search_metadata.location_check, { status: 'mismatched', retries: 1 });
  });

  t.test('npm serpapi › the archive by id: the same Error, 200 as SerpApi’s archive answers', async (t) => {
    const again = (await getJsonBySearchId(compatId, { api_key: key })) as Json;
    t.equal(again.search_metadata.status, 'Error');
    t.match(again.error, PLACED);
    t.notOk(again.organic_results);
  });

  t.test('its pages stay readable: /v1 partial with results, and the raw HTML link', async (t) => {
    const native = (await (await pollJob(svc.url, key, compatId, 'json')).json()) as Json;
    t.equal(native.search_metadata.status, 'partial');
    t.ok(native.organic_results.length > 0, 'the results are there, flagged');
    t.match(native.search_metadata.location_check.reason, /^location_mismatch/);
    const raw = await fetch(compat.search_metadata.raw_html_file);
    t.equal(raw.status, 200);
    t.match(await raw.text(), /Chicago, Illinois/);
    const viaV1 = (await (await fetch(`${svc.url}/v1/search/${compatId}?output=compat`, { headers })).json()) as Json;
    t.equal(viaV1.search_metadata.status, 'Error', '/v1 output=compat says Error too');
    t.match(viaV1.error, PLACED);
  });

  t.test('MCP SDK › serp_search answers a failed tool result naming both places', async (t) => {
    const transport = new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers } });
    const mcp = new Client({ name: 'location-test', version: '1.0.0' });
    await mcp.connect(transport);
    t.teardown(() => mcp.close());
    const result = (await mcp.callTool(
      { name: 'serp_search', arguments: { keyword: 'elsewhere mcp', location: 'Austin, Texas', depth: 10 } },
      undefined,
      { timeout: 120_000 },
    )) as { isError?: boolean; content: Array<{ text: string }>; structuredContent?: unknown };
    t.equal(result.isError, true);
    t.match(result.content[0]!.text, /^Search placed elsewhere \(job [0-9a-f]{24}, location_mismatch\)/);
    t.match(result.content[0]!.text, PLACED);
    t.match(result.content[0]!.text, ASKED);
    const raw = (await mcp.callTool({
      name: 'serp_get_results',
      arguments: { job_id: compatId, output: 'html' },
    })) as { isError?: boolean; content: Array<{ text: string }> };
    t.equal(raw.isError, true, 'its raw pages as a link: a failure too');
    t.match(raw.content[0]!.text, /^Search placed elsewhere .*Its raw pages: http/);
  });

  t.test('/v1’s link to the raw pages says the search was placed elsewhere', async (t) => {
    const link = (await (await fetch(`${svc.url}/v1/search/${compatId}`, { headers })).json()) as Json;
    t.match(link, { status: 'partial', location_check: 'mismatched', html_url: /\/raw\// });
  });

  t.test('standardwebhooks › search.completed carries the failure and no results', async (t) => {
    const res = await submit(svc.url, key, { keyword: 'elsewhere native', location: 'Austin, Texas', depth: 10 });
    const { job_id: jobId } = (await res.json()) as { job_id: string };
    await pollJob(svc.url, key, jobId);
    await receiver.waitFor(
      (all) => [compatId, jobId].every((j) => all.some((r) => r.payload?.data.job_id === j)),
      'search.completed of both searches',
    );
    for (const j of [compatId, jobId]) {
      const got = receiver.received.find((r) => r.payload?.data.job_id === j)!;
      t.equal(got.payload?.type, 'search.completed');
      t.match(got.payload?.data, {
        status: 'partial',
        failure: 'location_mismatch',
        detail: PLACED,
        organic_results_count: 0,
        top_results: [],
      });
    }
  });

  t.test('none of them is charged: the quota is given back, as for a failed search', async (t) => {
    const deadline = Date.now() + 30_000;
    while ((await used()) !== 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    t.equal(await used(), 0, 'this month’s usage after three searches placed elsewhere');
  });
});
