import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Test } from 'tap';
import { withinOneMinute } from '../support/clock.js';

/**
 * What an agent does with the tools, the same over stdio and Streamable HTTP: the caller gives a
 * connected SDK `Client` for a key.
 */
type Result = Awaited<ReturnType<Client['callTool']>> & {
  structuredContent?: Record<string, any>;
  content: Array<{ type: string; text?: string }>;
};
export const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as Result;
export const textOf = (r: Result) => r.content.map((c) => c.text ?? '').join('\n');

/** every parameter the spec lists for the search tool, beside the submit body's */
export const SPEC_SEARCH_PARAMS = [
  'keyword',
  'location',
  'gl',
  'hl',
  'device',
  'stop_domain',
  'capture_aio',
  'uule',
  'lat',
  'lon',
  'radius',
  'engine_domain',
  'tbs',
  'tbm',
  'safe',
  'nfpr',
  'filter',
  'lr',
  'cr',
  'ludocid',
  'lsig',
  'kgmid',
  'si',
  'ibp',
  'uds',
  'color_scheme',
  'no_cache',
];

export const checkTools = async (t: Test, client: Client) => {
  const { tools } = await client.listTools();
  t.same(tools.map((x) => x.name).sort(), [
    'serp_get_results',
    'serp_rank_history',
    'serp_screenshot',
    'serp_search',
    'serp_usage',
  ]);
  const byName = Object.fromEntries(tools.map((x) => [x.name, x]));
  const search = byName.serp_search;
  const props = Object.keys(search.inputSchema.properties ?? {});
  for (const p of [...SPEC_SEARCH_PARAMS, 'wait', 'max_wait_seconds', 'output', 'mode']) {
    t.ok(props.includes(p), `serp_search takes ${p}`);
  }
  t.same(search.inputSchema.required, ['keyword'], 'only keyword is required');
  t.equal((search.inputSchema as { additionalProperties?: unknown }).additionalProperties, false, 'typos are refused');
  t.match(search.annotations, { readOnlyHint: true, openWorldHint: true, idempotentHint: false, title: String });
  t.match(byName.serp_get_results.annotations, { readOnlyHint: true, idempotentHint: true, title: String });
  t.match(byName.serp_usage.annotations, { readOnlyHint: true, idempotentHint: true, title: String });
  t.same(Object.keys(byName.serp_get_results.inputSchema.properties ?? {}).sort(), [
    'job_id',
    'mode',
    'output',
    'start',
  ]);
  t.same(byName.serp_get_results.inputSchema.required, ['job_id']);
  for (const tool of tools) {
    t.ok(tool.outputSchema, `${tool.name} declares an output schema`);
    t.ok((tool.description ?? '').length > 80, `${tool.name} says what it does`);
  }
  t.same((byName.serp_search.inputSchema.properties as Record<string, { enum?: string[] }>).device.enum, [
    'desktop',
    'mobile',
    'tablet',
  ]);
  t.match(
    (byName.serp_search.inputSchema.properties as Record<string, unknown>).depth,
    { type: 'integer', minimum: 10, maximum: 100, default: 100, description: /results wanted/ },
    'serp_search takes depth, as /v1 does',
  );
};

/** positions 1..N, each a title and a link: what an agent reads */
const checkCompactOrganic = (t: Test, result: Record<string, any>, first = 1) => {
  const organic = result.organic_results as Array<Record<string, unknown>>;
  t.ok(organic.length > 0, `${organic.length} organic results`);
  t.same(
    organic.map((r) => r.position),
    organic.map((_, i) => i + first),
    `positions run from ${first}`,
  );
  t.ok(
    organic.every((r) => typeof r.title === 'string' && (r.link === undefined || /^https?:\/\//.test(String(r.link)))),
  );
  t.notOk(JSON.stringify(result).includes('data:image'), 'no inline images in the compact view');
};

/** A fresh key's whole flow: usage, a waited search, the cached repeat, a job polled in every output, usage again. */
export const agentFlow = async (t: Test, client: Client, keyword: string) => {
  const before = await call(client, 'serp_usage');
  t.notOk(before.isError);
  t.match(before.structuredContent, { tier: String, used_this_month: 0, monthly_quota: Number });
  t.match(textOf(before), /0 of \d+ searches used this month/);

  const started = Date.now();
  const waited = await call(client, 'serp_search', { keyword, location: 'Austin, Texas, United States' });
  const waitedMs = Date.now() - started;
  t.notOk(waited.isError, textOf(waited).slice(0, 300));
  t.match(waited.structuredContent, { status: 'done', cached: false, mode: 'compact', output: 'json' });
  const compact = waited.structuredContent!.result;
  checkCompactOrganic(t, compact);
  t.equal(compact.keyword, keyword);
  t.match(compact.targeting, { location: /Austin/ }, 'what Google was sent');
  t.match(textOf(waited), /Organic results \(\d+\):\n1\. /, 'the text rendering lists the results');

  const again = await call(client, 'serp_search', { keyword, location: 'Austin, Texas, United States' });
  t.match(again.structuredContent, { status: 'done', cached: true }, 'an identical search is served from cache');
  t.match(textOf(again), /served from cache, no quota used/);
  const shallow = await call(client, 'serp_search', { keyword, location: 'Austin, Texas, United States', depth: 10 });
  t.match(shallow.structuredContent, { status: 'done', cached: true }, 'depth 10: the cached top 100 answers it');
  t.same(shallow.structuredContent!.result.organic_results, compact.organic_results.slice(0, 10), 'its top 10');

  const queued = await call(client, 'serp_search', { keyword: `${keyword} two`, wait: false, device: 'mobile' });
  t.match(queued.structuredContent, { status: 'queued', cached: false, next: /serp_get_results/ });
  const jobId = queued.structuredContent!.job_id as string;
  t.match(jobId, /^[0-9a-f]{24}$/);
  let polled = await call(client, 'serp_get_results', { job_id: jobId });
  let polls = 1;
  while (polled.structuredContent?.status === 'running' && polls < 120) {
    t.match(textOf(polled), /call serp_get_results/);
    await new Promise((r) => setTimeout(r, 500));
    polled = await call(client, 'serp_get_results', { job_id: jobId });
    polls += 1;
  }
  t.match(polled.structuredContent, { job_id: jobId, status: 'done', mode: 'compact' }, `done after ${polls} poll(s)`);
  checkCompactOrganic(t, polled.structuredContent!.result);

  const full = await call(client, 'serp_get_results', { job_id: jobId, mode: 'full' });
  t.same(
    Object.keys(full.structuredContent!.result)
      .filter((k) => k !== 'ai_overview')
      .sort(),
    ['organic_results', 'search_metadata', 'serp_features'],
  );
  t.equal(JSON.parse(textOf(full).split('\n\n').slice(1).join('\n\n')).search_metadata.id, jobId, 'full text is JSON');
  const compat = await call(client, 'serp_get_results', { job_id: jobId, output: 'compat', mode: 'full' });
  t.match(compat.structuredContent!.result.search_metadata, { id: jobId, status: 'Success' });
  const compatCompact = await call(client, 'serp_get_results', { job_id: jobId, output: 'compat' });
  t.same(
    compatCompact.structuredContent!.result.organic_results,
    polled.structuredContent!.result.organic_results,
    'compact reads the same from compat and json',
  );
  const html = await call(client, 'serp_get_results', { job_id: jobId, output: 'html' });
  t.match(html.structuredContent, { status: 'done', html_url: new RegExp(`/raw/${jobId}\\?expires=`) });
  const raw = await fetch(html.structuredContent!.html_url);
  t.equal(raw.status, 200, 'the html link opens');
  await raw.arrayBuffer();
  const page2 = await call(client, 'serp_get_results', { job_id: jobId, start: 10 });
  if (polled.structuredContent!.result.organic_results.length > 10)
    checkCompactOrganic(t, page2.structuredContent!.result, 11);

  const after = await call(client, 'serp_usage');
  t.match(after.structuredContent, { used_this_month: 2 }, 'two searches charged: the cached one was free');
  return { waitedMs, compactBytes: JSON.stringify(compact).length };
};

/** A bad argument, an unknown job, an exhausted quota: each an isError result with the service's detail. */
export const errorFlow = async (t: Test, client: Client, quotaClient: Client, rateClient: Client) => {
  const bad = await call(client, 'serp_search', { keyword: 'x', gl: 'zz' });
  t.equal(bad.isError, true, 'a bad argument is an isError result');
  t.match(textOf(bad), /gl must be a two-letter Google country code/);
  const typo = await call(client, 'serp_search', { q: 'coffee' });
  t.equal(typo.isError, true);
  t.match(textOf(typo), /keyword/);
  const shallow = await call(client, 'serp_search', { keyword: 'x', depth: 5 });
  t.equal(shallow.isError, true, 'a depth under 10 is refused');
  t.match(textOf(shallow), /depth must be at least 10/);
  const both = await call(client, 'serp_search', { keyword: 'x', lat: 30 });
  t.equal(both.isError, true, "the submit body's cross-field rules hold too");
  t.match(textOf(both), /lat and lon must be given together/);
  const unknown = await call(client, 'serp_get_results', { job_id: 'a'.repeat(24) });
  t.equal(unknown.isError, true);
  t.match(textOf(unknown), /Not found \(HTTP 404\): job not found/);
  const badId = await call(client, 'serp_get_results', { job_id: '../admin' });
  t.equal(badId.isError, true);
  t.match(textOf(badId), /job_id is the 24 hex characters/);
  const location = await call(client, 'serp_search', { keyword: 'x', location: 'Nowhere Land, Atlantis' });
  t.equal(location.isError, true, 'an unknown location is refused by /v1');
  t.match(textOf(location), /Invalid arguments \(HTTP 422\): unknown location/);

  const first = await call(quotaClient, 'serp_search', { keyword: 'quota one', wait: false });
  t.notOk(first.isError, 'the one search of the quota');
  const over = await call(quotaClient, 'serp_search', { keyword: 'quota two', wait: false });
  t.equal(over.isError, true, 'over the quota: isError');
  t.match(textOf(over), /^Quota exhausted \(HTTP 429\): .*renews at \d{4}-\d\d-01T00:00:00Z \(retry after \d+ s\)/);
  const usage = await call(quotaClient, 'serp_usage');
  t.match(usage.structuredContent, { monthly_quota: 1, remaining: 0 });

  // both in one of the limiter's minutes
  await withinOneMinute(5_000);
  t.notOk((await call(rateClient, 'serp_search', { keyword: 'rate one', wait: false })).isError);
  const fast = await call(rateClient, 'serp_search', { keyword: 'rate two', wait: false });
  t.equal(fast.isError, true, 'over the per-minute rate: isError');
  t.match(textOf(fast), /^Rate limited \(HTTP 429\): .*retry in \d+ s/);
};
