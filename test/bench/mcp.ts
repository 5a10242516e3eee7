/**
 * The MCP server's figures (docs/benchmarks.md#mcp), in one run:
 * 1. Sizes: for every fixture page (one Google page) and for stored 10-page searches, the full native body against the
 *    compact view (its structured JSON and its text rendering), in bytes and estimated tokens (bytes / 4).
 * 2. Reading a finished job: `serp_get_results` through `serp-api-mcp` on stdio (the SDK's client), compact and full,
 *    against the baseline an agent without MCP would run, `GET /v1/search/{id}?output=json` with fetch + JSON.parse,
 *    sequential calls, alternated over two rounds (the first side changes each round).
 * 3. One waited search (a fresh keyword): `serp_search` with wait=true against the fastest a client of /v1 can do,
 *    `POST /v1/search?output=json` with `async: false` (the service waits in-process, no poll interval), three each,
 *    alternated.
 * No ratio is printed when a side had a failed call or a search that did not end done (compare.ts).
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
import { alternate, type Figure, machineNote, medianOf, printRatio, quantile } from './compare.js';

const calls = Number(process.argv[2] ?? 200);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const missing = fixturesMissing();
if (missing) {
  console.log(`skipped: ${missing}`);
  process.exit(0);
}

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
  const timeCalls = async (fn: (i: number) => Promise<boolean>): Promise<Figure> => {
    let failures = 0;
    const started = performance.now();
    for (let i = 0; i < calls; i++) if (!(await fn(i))) failures++;
    return { value: (performance.now() - started) / calls, failures };
  };
  const reading = await alternate(2, {
    direct: () =>
      timeCalls(async (i) => {
        const res = await fetch(`${svc.url}/v1/search/${jobIds[i % jobIds.length]}?output=json`, { headers });
        await res.json();
        return res.status === 200;
      }),
    compact: () =>
      timeCalls(async (i) => {
        const r = await client.callTool({
          name: 'serp_get_results',
          arguments: { job_id: jobIds[i % jobIds.length], mode: 'compact' },
        });
        return !r.isError;
      }),
    full: () =>
      timeCalls(async (i) => {
        const r = await client.callTool({
          name: 'serp_get_results',
          arguments: { job_id: jobIds[i % jobIds.length], mode: 'full' },
        });
        return !r.isError;
      }),
  });
  console.log(
    `\nReading a finished job, ${calls} sequential calls per run, two rounds, first side alternated (ms per call); ${machineNote()}`,
  );
  reading.direct.forEach((direct, i) => {
    const [compact, full] = [reading.compact[i]!, reading.full[i]!];
    console.log(
      `  round ${i + 1}: GET /v1 + JSON.parse ${direct.value.toFixed(2)}   MCP compact ${compact.value.toFixed(2)}   MCP full ${full.value.toFixed(2)}   (failures ${direct.failures}/${compact.failures}/${full.failures})`,
    );
  });
  const direct = medianOf(reading.direct);
  printRatio('  time per call, MCP compact / GET /v1 + JSON.parse', medianOf(reading.compact), direct, ['MCP', '/v1']);
  printRatio('  time per call, MCP full / GET /v1 + JSON.parse', medianOf(reading.full), direct, ['MCP', '/v1']);

  // 3. one waited search, a fresh keyword each time, the first side alternated
  const waited = await alternate(3, {
    mcp: async (i): Promise<Figure> => {
      const t0 = performance.now();
      const r = await client.callTool({ name: 'serp_search', arguments: { keyword: `waited ${i}` } });
      const status = (r.structuredContent as { status?: string } | undefined)?.status;
      return { value: performance.now() - t0, failures: r.isError || status !== 'done' ? 1 : 0 };
    },
    sync: async (i): Promise<Figure> => {
      const t0 = performance.now();
      // output=json: the results themselves, as serp_search returns them (the default answer is the raw-HTML link)
      const res = await fetch(`${svc.url}/v1/search?output=json`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ keyword: `sync ${i}`, async: false }),
      });
      const body = (await res.json()) as { search_metadata?: { status?: string } };
      const ok = res.status === 200 && body.search_metadata?.status === 'done';
      return { value: performance.now() - t0, failures: ok ? 0 : 1 };
    },
  });
  const [mcp, sync] = [medianOf(waited.mcp), medianOf(waited.sync)];
  console.log('\nOne waited search, fresh keyword, fake origin (median of 3, first side alternated)');
  console.log(
    `  serp_search wait=true (polls /v1 every 1.5-2 s)   ${mcp.value.toFixed(0)} ms (failures ${mcp.failures})`,
  );
  console.log(
    `  POST /v1/search async:false (waits in-process)    ${sync.value.toFixed(0)} ms (failures ${sync.failures})`,
  );
  printRatio(
    '  time, async:false / serp_search (the gap is the poll interval; against live Google a search takes 5-30 s)',
    sync,
    mcp,
    ['async:false', 'serp_search'],
  );
} finally {
  for (const c of clients) await c.close();
  await svc.stop();
  await google.close();
  removeDir(data);
}
