/**
 * The MCP server's figures (docs/benchmarks.md#mcp), in one run:
 * 1. Sizes: for every fixture page (one Google page) and for stored 10-page searches, the full native body against the
 *    compact view (its structured JSON and its text rendering), in bytes and estimated tokens (bytes / 4).
 * 2. Reading a finished job: `serp_get_results` through `serp-api-mcp` on stdio (the SDK's client), compact and full,
 *    against the baseline an agent without MCP would run, `GET /v1/search/{id}?output=json` with fetch + JSON.parse,
 *    sequential calls, alternated over two rounds.
 * 3. One waited search (a fresh keyword): `serp_search` with wait=true against the fastest a client of /v1 can do,
 *    `POST /v1/search` with `async: false` (the service waits in-process, no poll interval).
 * Run: npx tsx test/bench/mcp.ts [calls]
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parse } from '../../parser/index.js';
import { compactResult, compactText } from '../../services/mcp/compact.js';
import { startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing, listSerpPages, readFixtureText } from '../support/fixtures.js';
import { cli, pollJob, removeDir, startService, submit, tempDataDir } from '../support/service.js';

const calls = Number(process.argv[2] ?? 200);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const missing = fixturesMissing();
if (missing) {
  console.log(`skipped: ${missing}`);
  process.exit(0);
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
};
const kb = (n: number) => `${(n / 1024).toFixed(1)} kB`;
const tokens = (n: number) => `~${Math.round(n / 4).toLocaleString('en')} tok`;

interface Sizes {
  full: number;
  compact: number;
  text: number;
}
const sizesOf = (body: Record<string, unknown>): Sizes => {
  const compact = compactResult(body);
  return {
    full: JSON.stringify(body).length,
    compact: JSON.stringify(compact).length,
    text: compactText(compact).length,
  };
};
const printSizes = (label: string, sizes: Sizes[]) => {
  const col = (k: keyof Sizes) => sizes.map((s) => s[k]);
  const line = (k: keyof Sizes, name: string) =>
    `  ${name.padEnd(22)} median ${kb(quantile(col(k), 0.5)).padStart(9)} (${tokens(quantile(col(k), 0.5))})   p90 ${kb(quantile(col(k), 0.9)).padStart(9)}   max ${kb(Math.max(...col(k))).padStart(9)}`;
  const ratio = sizes.map((s) => s.compact / s.full);
  console.log(`\n${label} (${sizes.length})`);
  console.log(line('full', 'full body (mode=full)'));
  console.log(line('compact', 'compact, structured'));
  console.log(line('text', 'compact, text'));
  console.log(
    `  compact / full: median ${quantile(ratio, 0.5).toFixed(2)}, p90 ${quantile(ratio, 0.9).toFixed(2)} (smaller is better)`,
  );
};

// 1. one page at a time, straight from the parser
const pageSizes: Sizes[] = [];
for (const path of listSerpPages()) {
  const out = parse(readFixtureText(path), { captureAio: true });
  if (out.kind !== 'serp') continue;
  const { information, ...rest } = out.serp;
  pageSizes.push(sizesOf({ search_metadata: { id: 'x', status: 'done', parameters: {}, information }, ...rest }));
}
printSizes('Fixture pages, one Google page each', pageSizes);

const google = await startFakeGoogle({});
const data = tempDataDir('bench-mcp');
const svc = await startService(data, { SERP_GOOGLE_ORIGIN: google.origin });
const clients: Client[] = [];
try {
  const key = JSON.parse(
    await cli([
      'keys',
      'create',
      '--tier',
      'enterprise',
      '--quota',
      '0',
      '--rate',
      '1000000',
      '--json',
      '--data',
      data,
    ]),
  ).key as string;
  const headers = { 'x-api-key': key };

  // stored 10-page searches, as the service serves them
  const stored: Sizes[] = [];
  const jobIds: string[] = [];
  for (let i = 0; i < 8; i++) {
    const { job_id } = (await (await submit(svc.url, key, { keyword: `bench mcp ${i}` })).json()) as { job_id: string };
    stored.push(
      sizesOf((await (await pollJob(svc.url, key, job_id, 'json', 120_000)).json()) as Record<string, unknown>),
    );
    jobIds.push(job_id);
  }
  printSizes('Stored searches, up to ten pages merged (fake origin)', stored);

  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(root, 'bin', 'serp-api-mcp.js')],
    env: { PATH: process.env.PATH ?? '', SERP_API_BASE_URL: svc.url, SERP_API_KEY: key },
  });
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(transport);
  clients.push(client);

  // 2. reading a finished job
  const timeCalls = async (fn: (i: number) => Promise<unknown>) => {
    const started = performance.now();
    for (let i = 0; i < calls; i++) await fn(i);
    return (performance.now() - started) / calls;
  };
  const direct = () =>
    timeCalls(async (i) => {
      const res = await fetch(`${svc.url}/v1/search/${jobIds[i % jobIds.length]}?output=json`, { headers });
      return res.json();
    });
  const viaMcp = (mode: 'compact' | 'full') =>
    timeCalls((i) =>
      client.callTool({ name: 'serp_get_results', arguments: { job_id: jobIds[i % jobIds.length], mode } }),
    );
  const rounds: Array<{ direct: number; compact: number; full: number }> = [];
  for (let round = 0; round < 2; round++) {
    rounds.push({ direct: await direct(), compact: await viaMcp('compact'), full: await viaMcp('full') });
  }
  console.log(`\nReading a finished job, ${calls} sequential calls per run, two rounds (ms per call)`);
  for (const [i, r] of rounds.entries()) {
    console.log(
      `  round ${i + 1}: GET /v1 + JSON.parse ${r.direct.toFixed(2)}   MCP compact ${r.compact.toFixed(2)} (${(r.direct / r.compact).toFixed(2)}x)   MCP full ${r.full.toFixed(2)} (${(r.direct / r.full).toFixed(2)}x)`,
    );
  }

  // 3. one waited search, three fresh keywords each way
  const waited: number[] = [];
  const sync: number[] = [];
  for (let i = 0; i < 3; i++) {
    let t0 = performance.now();
    const r = await client.callTool({ name: 'serp_search', arguments: { keyword: `waited ${i}` } });
    waited.push(performance.now() - t0);
    if (r.isError) throw new Error(JSON.stringify(r.content));
    t0 = performance.now();
    const res = await submit(svc.url, key, { keyword: `sync ${i}`, async: false });
    await res.json();
    sync.push(performance.now() - t0);
  }
  const med = (xs: number[]) => quantile(xs, 0.5);
  console.log('\nOne waited search, fresh keyword, fake origin (median of 3)');
  console.log(`  serp_search wait=true (polls /v1 every 1.5-2 s)   ${med(waited).toFixed(0)} ms`);
  console.log(`  POST /v1/search async:false (waits in-process)    ${med(sync).toFixed(0)} ms`);
  console.log(
    `  ratio ${(med(sync) / med(waited)).toFixed(2)}x: the gap is the poll interval; against live Google a search takes 5-30 s`,
  );
} finally {
  for (const c of clients) await c.close();
  await svc.stop();
  await google.close();
  removeDir(data);
}
