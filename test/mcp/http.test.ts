import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import { chromiumMissing } from '../support/chromium.js';
import { fixturesMissing } from '../support/fixtures.js';
import { cli, startStack } from '../support/service.js';
import { agentFlow, call, checkTools, errorFlow, textOf } from './flow.js';

/** The same tools over Streamable HTTP at `/mcp` on the service, through a listening port. */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const run = promisify(execFile);

const connect = async (t: { teardown(fn: () => unknown): void }, url: string, headers: Record<string, string>) => {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } });
  const client = new Client({ name: 'http-test', version: '1.0.0' });
  await client.connect(transport);
  t.teardown(() => client.close());
  return { client, transport };
};

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const both = 'application/json, text/event-stream';

t.test('the MCP tools over Streamable HTTP at /mcp', { skip: fixturesMissing() }, async (t) => {
  const { svc, data, mintKey } = await startStack(t);
  const { key } = await mintKey(['--tier', 'free', '--label', 'http']);

  t.test('tools, schemas and annotations (X-API-Key)', async (t) => {
    const { client, transport } = await connect(t, svc.url, { 'x-api-key': key });
    t.match(transport.sessionId, /^[0-9a-f-]{36}$/, 'initialize opened a session');
    await checkTools(t, client);
  });

  t.test('an agent searches, waits, polls every output, and checks usage (Bearer)', async (t) => {
    const { key: fresh } = await mintKey(['--tier', 'free', '--label', 'flow']);
    const { client } = await connect(t, svc.url, { authorization: `Bearer ${fresh}` });
    const { waitedMs, compactBytes } = await agentFlow(t, client, 'http coffee');
    t.comment(`a waited search took ${waitedMs} ms; its compact result is ${compactBytes} bytes`);
  });

  t.test(
    "serp_screenshot returns the first screen as image content with the domain's rectangles",
    { skip: chromiumMissing() },
    async (t) => {
      const { client } = await connect(t, svc.url, { 'x-api-key': key });
      const searched = await call(client, 'serp_search', { keyword: 'http screenshot', depth: 10 });
      const jobId = searched.structuredContent?.job_id as string;
      const organic = (searched.structuredContent?.result?.organic_results ?? []) as Array<{ link: string }>;
      const first = organic[0]?.link ?? '';
      const domain = new URL(first).hostname.replace(/^www\./, '');
      const shot = await call(client, 'serp_screenshot', { job_id: jobId, domain });
      t.notOk(shot.isError, 'not an error');
      const image = shot.content.find((c) => c.type === 'image') as { data: string; mimeType: string } | undefined;
      t.equal(image?.mimeType, 'image/png', 'an image content of type PNG');
      t.equal(
        Buffer.from(image?.data ?? '', 'base64')
          .subarray(0, 4)
          .toString('hex'),
        '89504e47',
        'PNG bytes',
      );
      const out = shot.structuredContent as { viewport: unknown; results: Array<{ link: string; rectangle: unknown }> };
      t.same(out.viewport, { width: 1366, height: 768 }, 'the viewport it was laid out in');
      t.ok(out.results.length >= 1, `${out.results.length} of ${domain}'s results`);
      t.ok(
        out.results.every((r) => new URL(r.link).hostname.endsWith(domain) && r.rectangle !== null),
        'each on the domain, with its rectangle',
      );
      t.match(textOf(shot), /above the fold|below the fold/, 'the text says where each lies');
    },
  );

  t.test('errors are isError results with the detail', async (t) => {
    const { key: quotaKey } = await mintKey(['--tier', 'free', '--quota', '1']);
    const { key: rateKey } = await mintKey(['--tier', 'free', '--rate', '1']);
    await errorFlow(
      t,
      (await connect(t, svc.url, { 'x-api-key': key })).client,
      (await connect(t, svc.url, { 'x-api-key': quotaKey })).client,
      (await connect(t, svc.url, { 'x-api-key': rateKey })).client,
    );
  });

  t.test('sessions: bound to their key, ended by DELETE, refused with a detail', async (t) => {
    const { key: other } = await mintKey(['--tier', 'free']);
    const { client, transport } = await connect(t, svc.url, { 'x-api-key': key });
    const sid = transport.sessionId!;
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    const post = (headers: Record<string, string>, body: unknown = list) =>
      fetch(`${svc.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: both, 'mcp-protocol-version': '2025-06-18', ...headers },
        body: JSON.stringify(body),
      });
    const stolen = await post({ 'x-api-key': other, 'mcp-session-id': sid });
    t.equal(stolen.status, 404, 'another key cannot use a session: it does not exist for that key');
    t.match(await stolen.json(), { jsonrpc: '2.0', error: { code: -32001 }, detail: /Session not found/ });
    const noSession = await post({ 'x-api-key': key });
    t.equal(noSession.status, 400);
    t.match(await noSession.json(), { error: { code: -32000 }, detail: /Mcp-Session-Id header is required/ });
    const accept = await post({ 'x-api-key': key, 'mcp-session-id': sid, accept: 'application/json' });
    t.equal(accept.status, 406);
    t.match(await accept.json(), { detail: /Accept must list both/ });
    const notRpc = await post({ 'x-api-key': key, 'mcp-session-id': sid }, { hello: 'world' });
    t.equal(notRpc.status, 400);
    t.match(await notRpc.json(), { error: { code: -32700 }, detail: /not a JSON-RPC 2\.0 message/ });
    const version = await post({ 'x-api-key': key, 'mcp-session-id': sid, 'mcp-protocol-version': '1999-01-01' });
    t.equal(version.status, 400);
    t.match(await version.json(), { detail: /unsupported MCP-Protocol-Version 1999-01-01/ });
    const noKey = await post({ 'mcp-session-id': sid });
    t.equal(noKey.status, 401);
    t.match(await noKey.json(), { code: 'SERP_AUTH_MISSING_KEY', detail: /missing API key/ });
    const text = await fetch(`${svc.url}/mcp`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'text/plain', accept: both },
      body: 'hi',
    });
    t.equal(text.status, 415);
    await text.arrayBuffer();

    t.notOk((await call(client, 'serp_usage')).isError, 'the session still works after all that');
    await transport.terminateSession();
    const ended = await post({ 'x-api-key': key, 'mcp-session-id': sid });
    t.equal(ended.status, 404, 'a DELETEd session is gone');
    await ended.arrayBuffer();
  });

  t.test('a wrong key is a 401 at connect; a revoked key a 401 on its next message', async (t) => {
    const bad = new Client({ name: 'bad', version: '1' });
    await t.rejects(
      bad.connect(
        new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), {
          requestInit: { headers: { 'x-api-key': 'sk_wrong' } },
        }),
      ),
      /401|invalid API key|Unauthorized/,
    );
    const res = await fetch(`${svc.url}/mcp`, {
      method: 'POST',
      headers: { 'x-api-key': 'sk_wrong', 'content-type': 'application/json', accept: both },
      body: JSON.stringify(initialize),
    });
    t.equal(res.status, 401);
    t.match(await res.json(), { code: 'SERP_AUTH_INVALID_KEY', detail: 'invalid API key' });

    const { key: doomed, key_id } = await mintKey(['--tier', 'free']);
    const { client } = await connect(t, svc.url, { 'x-api-key': doomed });
    t.notOk((await call(client, 'serp_usage')).isError);
    await cli(['keys', 'revoke', key_id, '--data', data]);
    await t.rejects(call(client, 'serp_usage'), /401|revoked/, 'the revoked key is refused at /mcp itself');
  });

  t.test("the MCP Inspector's CLI lists the tools over HTTP", async (t) => {
    // the inspector reads its own package.json relative to the working directory: run it from its build folder
    const build = join(root, 'node_modules', '@modelcontextprotocol', 'inspector-cli', 'build');
    const { stdout } = await run(
      process.execPath,
      [
        join(build, 'cli.js'),
        '--cli',
        `${svc.url}/mcp`,
        '--transport',
        'http',
        '--header',
        `X-API-Key: ${key}`,
        '--method',
        'tools/list',
      ],
      { cwd: build, timeout: 60_000 },
    );
    const listed = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { tools: Array<{ name: string }> };
    t.same(listed.tools.map((x) => x.name).sort(), [
      'serp_get_results',
      'serp_rank_history',
      'serp_screenshot',
      'serp_search',
      'serp_usage',
    ]);
  });

  t.test('the live OpenAPI documents /mcp', async (t) => {
    const doc = (await (await fetch(`${svc.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
    };
    const mcp = doc.paths['/mcp'];
    t.same(Object.keys(mcp).sort(), ['delete', 'get', 'post']);
    t.same(Object.keys(mcp.post.responses['200'].content ?? {}).sort(), ['application/json', 'text/event-stream']);
    t.ok(mcp.post.responses['401'] && mcp.post.responses['404'] && mcp.post.responses['406']);
  });
});
