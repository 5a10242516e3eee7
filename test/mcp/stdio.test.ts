import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { cli, startStack } from '../support/service.js';
import { agentFlow, call, checkTools, errorFlow, textOf } from './flow.js';

/**
 * `serp-api-mcp` as an MCP client runs it: the SDK's own Client spawning the package's bin (once through
 * `npx --no-install serp-api-mcp`, as the docs register it), configured by the two variables, against a running
 * service and a fake Google.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = join(root, 'bin', 'serp-api-mcp.js');
const run = promisify(execFile);

/**
 * the server entry an MCP client registers: command, args, the two variables. `viaNpx` spawns it as the docs
 * register it (`npx --no-install serp-api-mcp`); the other cases run the same bin with node, which spares npm's two
 * seconds of start-up per client
 */
const connect = async (t: { teardown(fn: () => unknown): void }, baseUrl: string, key: string, viaNpx = false) => {
  const transport = new StdioClientTransport({
    command: viaNpx ? 'npx' : process.execPath,
    args: viaNpx ? ['--no-install', 'serp-api-mcp'] : [bin],
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      SERP_API_BASE_URL: baseUrl,
      SERP_API_KEY: key,
      // a waiting serp_search polls every 200 ms, not 1.5–2 s (docs/configuration.md): the fake Google answers at once
      SERP_CLIENT_POLL_MS: '200',
    },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'stdio-test', version: '1.0.0' });
  await client.connect(transport);
  t.teardown(() => client.close());
  return client;
};

/** runs the bin with raw stdio: what it prints, and how it ends */
const runRaw = (env: NodeJS.ProcessEnv, input?: string) =>
  new Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, [bin], { cwd: root, env: { PATH: process.env.PATH, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
    if (input !== undefined) child.stdin.end(input);
  });

t.test('serp-api-mcp refuses to start without its configuration, in one stderr line', async (t) => {
  const none = await runRaw({});
  t.equal(none.code, 2);
  t.equal(none.stdout, '', 'nothing on stdout');
  t.match(none.stderr, /^serp-api-mcp: SERP_API_BASE_URL is not set: .*SERP_API_KEY is not set: .*\n$/);
  t.equal(none.stderr.trim().split('\n').length, 1, 'one line');
  const notUrl = await runRaw({ SERP_API_BASE_URL: 'localhost 8080', SERP_API_KEY: 'sk_x' });
  t.match(notUrl.stderr, /SERP_API_BASE_URL "localhost 8080" is not a URL/);
  const unreachable = await runRaw({ SERP_API_BASE_URL: 'http://127.0.0.1:9', SERP_API_KEY: 'sk_x' });
  t.equal(unreachable.code, 2);
  t.match(unreachable.stderr, /^serp-api-mcp: cannot reach http:\/\/127\.0\.0\.1:9: .*check SERP_API_BASE_URL/);
  t.ok(unreachable.ms < 15_000, 'it does not hang');
});

t.test('serp-api-mcp on stdio, driven by the SDK client', { skip: fixturesMissing() }, async (t) => {
  const { svc, data } = await startStack(t);
  // keys minted through the admin api, the request `serp-api keys create` sends to a running service, without a CLI
  // process per key
  const { adminToken } = JSON.parse(readFileSync(join(data, 'secrets.json'), 'utf8')) as { adminToken: string };
  const mintKey = async (body: {
    tier: string;
    label?: string;
    monthly_quota?: number;
    rate_limit_per_min?: number;
  }) => {
    const res = await fetch(`${svc.url}/admin/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`mint: ${res.status} ${await res.text()}`);
    return (await res.json()) as { key: string; key_id: string };
  };
  const { key } = await mintKey({ tier: 'free', label: 'stdio' });

  t.test('a wrong key ends the process at start with the reason', async (t) => {
    const wrong = await runRaw({ SERP_API_BASE_URL: svc.url, SERP_API_KEY: 'sk_wrong' });
    t.equal(wrong.code, 2);
    t.equal(wrong.stdout, '');
    t.match(wrong.stderr, /^serp-api-mcp: SERP_API_KEY was refused by http:\/\/127\.0\.0\.1:\d+: invalid API key\n$/);
    const notUs = await runRaw({ SERP_API_BASE_URL: `${svc.url}/nothing-here`, SERP_API_KEY: key });
    t.match(notUs.stderr, /does not look like a serp-api service \(GET \/v1\/usage answered 404\)/);
  });

  t.test('stdout carries the protocol only, and the server ends with its stdin', async (t) => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const out = await runRaw({ SERP_API_BASE_URL: svc.url, SERP_API_KEY: key }, `${JSON.stringify(init)}\n`);
    t.equal(out.code, 0, 'exits cleanly when the client closes stdin');
    const lines = out.stdout.trim().split('\n');
    t.equal(lines.length, 1);
    t.match(JSON.parse(lines[0]), { jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'serp-api' } } });
    t.match(out.stderr, /serving http:\/\/127\.0\.0\.1:\d+ on stdio/, 'its own lines go to stderr');
  });

  t.test("the MCP Inspector's CLI lists the tools on stdio", async (t) => {
    // the inspector reads its own package.json relative to the working directory: run it from its build folder
    const build = join(root, 'node_modules', '@modelcontextprotocol', 'inspector-cli', 'build');
    const { stdout } = await run(
      process.execPath,
      [
        join(build, 'cli.js'),
        '--cli',
        '-e',
        `SERP_API_BASE_URL=${svc.url}`,
        '-e',
        `SERP_API_KEY=${key}`,
        process.execPath,
        bin,
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

  t.test('tools, schemas and annotations', async (t) => {
    await checkTools(t, await connect(t, svc.url, key, true));
  });

  t.test('an agent searches, waits, polls every output, and checks usage', async (t) => {
    const { key: fresh } = await mintKey({ tier: 'free', label: 'flow' });
    const { waitedMs, compactBytes } = await agentFlow(t, await connect(t, svc.url, fresh), 'stdio coffee');
    t.comment(`a waited search took ${waitedMs} ms; its compact result is ${compactBytes} bytes`);
  });

  t.test('errors are isError results with the detail', async (t) => {
    const { key: quotaKey } = await mintKey({ tier: 'free', monthly_quota: 1 });
    const { key: rateKey } = await mintKey({ tier: 'free', rate_limit_per_min: 1 });
    await errorFlow(
      t,
      await connect(t, svc.url, key),
      await connect(t, svc.url, quotaKey),
      await connect(t, svc.url, rateKey),
    );
  });

  t.test('a key revoked while the server runs: the next call is an isError result', async (t) => {
    const { key: doomed, key_id } = await mintKey({ tier: 'free' });
    const client = await connect(t, svc.url, doomed);
    t.notOk((await call(client, 'serp_usage')).isError);
    await cli(['keys', 'revoke', key_id, '--data', data]);
    const after = await call(client, 'serp_usage');
    t.equal(after.isError, true);
    t.match(textOf(after), /^The API key was refused \(HTTP 401\): this API key has been revoked/);
  });
});
