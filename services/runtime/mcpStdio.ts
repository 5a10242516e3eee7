import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createV1Client, V1Error } from '../client/v1Client.js';
import { packageVersion } from '../compose/version.js';
import { loadClientPollMs, loadMcpClientConfig } from '../config/clients.js';
import { createMcpServer } from '../mcp/server.js';

/**
 * `serp-api-mcp`: the MCP server on stdio (spec). stdout carries the protocol and nothing else; every other line goes
 * to stderr. A missing or wrong SERP_API_BASE_URL or SERP_API_KEY ends the process at start with one line saying why
 * (exit 2), checked with a bounded GET /v1/usage, so a misconfigured client never hangs on a silent server.
 */
const fail = (line: string): never => {
  process.stderr.write(`serp-api-mcp: ${line}\n`);
  process.exit(2);
};

const loaded = loadMcpClientConfig();
if (!loaded.ok) fail(loaded.problems.join('; '));
const { config } = loaded as Extract<typeof loaded, { ok: true }>;
const client = createV1Client({ baseUrl: config.baseUrl, apiKey: config.apiKey, timeoutMs: 60_000 });

try {
  await createV1Client({ ...config, timeoutMs: 10_000 }).usage();
} catch (err) {
  if (!(err instanceof V1Error)) throw err;
  if (err.kind === 'auth') fail(`SERP_API_KEY was refused by ${config.baseUrl}: ${err.detail}`);
  else if (err.status === 404)
    fail(
      `${config.baseUrl} does not look like a serp-api service (GET /v1/usage answered 404): check SERP_API_BASE_URL`,
    );
  else if (err.kind === 'unavailable') fail(`${err.detail}: check SERP_API_BASE_URL and that the service runs`);
  // a 429 at start (the key is over its read ceiling) is not a configuration error: serve, the tools will say it
  else if (err.kind !== 'rate' && err.kind !== 'quota') fail(`${config.baseUrl}: ${err.detail}`);
}

// a waiting serp_search polls every SERP_CLIENT_POLL_MS (1.5 s) and up to a third more, jittered
const pollBase = loadClientPollMs();
const server = createMcpServer({
  client,
  version: packageVersion(),
  pollMs: () => pollBase + Math.floor((Math.random() * pollBase) / 3),
});
await server.connect(new StdioServerTransport());
process.stderr.write(`serp-api-mcp: serving ${config.baseUrl} on stdio\n`);
const close = () => {
  server.close().finally(() => process.exit(0));
};
process.stdin.once('end', close);
process.once('SIGTERM', close);
process.once('SIGINT', close);
