/**
 * HTTP benchmark (autocannon, real sockets) of the service as `npm start` runs it (this checkout's build, `node
 * bin/serp-api.js serve`, built first; from the sources through tsx it answers ~10% fewer submits): submits per
 * second, and fetches of a finished result per second against
 * the honest baseline, a bare Fastify route in a process of its own that sends the same JSON text it holds already
 * serialised (no parse, no serialisation, no auth: the floor a stored-bytes answer can reach). The two are alternated
 * over two rounds in the same run (the first side changes each round) so the ratio survives a noisy machine, and no
 * ratio is printed when either side had a non-2xx answer or an error (compare.ts). Also: a poll that revalidates with
 * If-None-Match (304), and the same fetch with Accept-Encoding: br.
 * Run: npx tsx test/bench/api.ts [seconds] [--no-build]
 */
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startBuiltService } from '../support/builtService.js';
import { startFakeGoogle } from '../support/fakeGoogle.js';
import { cli, pollJob, removeDir, submit, tempDataDir } from '../support/service.js';
import { alternate, autocannonRow, machineNote, printRatio, requestsPerSecond, total } from './compare.js';

const args = process.argv.slice(2);
const seconds = Number(args.find((a) => /^\d+$/.test(a)) ?? 10);
if (!args.includes('--no-build')) execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
const run = (opts: autocannon.Options) =>
  new Promise<autocannon.Result>((resolve, reject) =>
    autocannon({ duration: seconds, connections: 32, ...opts }, (err, res) => (err ? reject(err) : resolve(res))),
  );

const google = await startFakeGoogle({});
const data = tempDataDir('bench');
const svc = await startBuiltService('.', data, { SERP_GOOGLE_ORIGIN: google.origin, SERP_CRAWLER_CONCURRENCY: '2' });
try {
  const key = JSON.parse(
    await cli(['keys', 'create', '--tier', 'enterprise', '--rate', '100000000', '--json', '--data', data]),
  ).key;
  const first = (await (await submit(svc.url, key, { keyword: 'coffee' })).json()) as { job_id: string };
  const resultRes = await pollJob(svc.url, key, first.job_id, 'json', 120_000);
  const resultBody = await resultRes.text();
  const status = (JSON.parse(resultBody) as { search_metadata?: { status?: string } }).search_metadata?.status;
  if (resultRes.status !== 200 || status !== 'done')
    throw new Error(`the first search ended ${resultRes.status} ${status}`);
  // The submits below each start a crawl. Park them at a slow origin so the run measures the API and the event
  // store, not the parser competing for the same two cores.
  google.setMode({ latencyMs: 600_000 });

  let n = 0;
  const submits = await run({
    url: `${svc.url}/v1/search`,
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ keyword: `bench ${n++}`, no_cache: true }) }),
      },
    ],
  });

  // the baseline: its own process, the same bytes held as the service holds a finished answer (a Buffer of UTF-8),
  // sent as they are
  const bodyFile = join(data, 'bench-body.json');
  writeFileSync(bodyFile, resultBody);
  const bare = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import Fastify from 'fastify'; import { readFileSync } from 'node:fs';
       const body = readFileSync(${JSON.stringify(bodyFile)});
       const app = Fastify();
       app.get('/r', (_req, reply) => { reply.type('application/json').send(body); });
       console.log(await app.listen({ port: 0, host: '127.0.0.1' }));`,
    ],
    { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const bareUrl = await new Promise<string>((resolve) =>
    bare.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())),
  );

  const fetchUrl = `${svc.url}/v1/search/${first.job_id}?output=json`;
  const rounds = await alternate(2, {
    fetches: () => run({ url: fetchUrl, headers: { 'x-api-key': key } }),
    baseline: () => run({ url: `${bareUrl}/r` }),
  });
  const etag = (await fetch(fetchUrl, { headers: { 'x-api-key': key } }).then(async (r) => {
    await r.arrayBuffer();
    return r.headers.get('etag');
  })) as string | null;
  const revalidate = etag
    ? await run({ url: fetchUrl, headers: { 'x-api-key': key, 'if-none-match': etag } })
    : undefined;
  const brotli = await run({ url: fetchUrl, headers: { 'x-api-key': key, 'accept-encoding': 'br' } });
  bare.kill();

  const row = autocannonRow;
  console.log(
    `\nAPI benchmark: ${seconds}s per run, 32 connections, result body ${(resultBody.length / 1024).toFixed(1)} kB; ${machineNote()}`,
  );
  console.log(row('POST /v1/search (new jobs)', submits));
  for (let i = 0; i < rounds.fetches.length; i++) {
    const [fetches, baseline] = [rounds.fetches[i]!, rounds.baseline[i]!];
    console.log(`round ${i + 1} (${i % 2 === 0 ? 'service first' : 'bare route first'}):`);
    console.log(row('  GET /v1/search/{id}?output=json', fetches));
    console.log(row('  bare route, same bytes', baseline));
    printRatio('  finished-result fetch / bare route', requestsPerSecond(fetches), requestsPerSecond(baseline), [
      'the service',
      'the bare route',
    ]);
  }
  printRatio(
    'both rounds, finished-result fetch / bare route',
    total(rounds.fetches.map(requestsPerSecond)),
    total(rounds.baseline.map(requestsPerSecond)),
    ['the service', 'the bare route'],
  );
  // a 304 is the answer asked for here: its row shows it as non-2xx, and no ratio is drawn from it
  if (revalidate) console.log(row('GET with If-None-Match (304)', revalidate));
  console.log(row('GET with Accept-Encoding: br', brotli));
} finally {
  await svc.kill(); // a clean stop would drain crawls parked at the slow origin

  await google.close();
  removeDir(data);
}
// the origin's parked answers hold timers for ten minutes; nothing is left to wait for
process.exit(0);
