/**
 * HTTP benchmark (autocannon, real sockets): submits per second, and cached-result fetches per second against a bare
 * Fastify route returning the same JSON, measured in the same run so the ratio survives a noisy machine.
 * Run: npx tsx test/bench/api.ts [seconds]
 */
import autocannon from 'autocannon';
import Fastify from 'fastify';
import { startFakeGoogle } from '../support/fakeGoogle.js';
import { cli, pollJob, removeDir, startService, submit, tempDataDir } from '../support/service.js';

const seconds = Number(process.argv[2] ?? 10);
const run = (opts: autocannon.Options) =>
  new Promise<autocannon.Result>((resolve, reject) =>
    autocannon({ duration: seconds, connections: 32, ...opts }, (err, res) => (err ? reject(err) : resolve(res))),
  );

const google = await startFakeGoogle({});
const data = tempDataDir('bench');
const svc = await startService(data, { SERP_GOOGLE_ORIGIN: google.origin, SERP_CRAWLER_CONCURRENCY: '2' });
try {
  const key = JSON.parse(
    await cli(['keys', 'create', '--tier', 'enterprise', '--rate', '100000000', '--json', '--data', data]),
  ).key;
  const first = (await (await submit(svc.url, key, { keyword: 'coffee' })).json()) as { job_id: string };
  const resultRes = await pollJob(svc.url, key, first.job_id, 'json', 120_000);
  const resultBody = await resultRes.text();
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

  const fetches = await run({ url: `${svc.url}/v1/search/${first.job_id}?output=json`, headers: { 'x-api-key': key } });

  const bare = Fastify();
  bare.get('/r', async (_req, reply) => reply.type('application/json').send(JSON.parse(resultBody)));
  const bareUrl = await bare.listen({ port: 0, host: '127.0.0.1' });
  const baseline = await run({ url: `${bareUrl}/r` });
  await bare.close();

  const row = (name: string, r: autocannon.Result) =>
    `${name.padEnd(34)} ${r.requests.average.toFixed(0).padStart(8)} req/s   p50 ${String(r.latency.p50).padStart(4)} ms   p99 ${String(r.latency.p99).padStart(5)} ms   non-2xx ${r.non2xx}`;
  console.log(
    `\nAPI benchmark: ${seconds}s per run, 32 connections, result body ${(resultBody.length / 1024).toFixed(1)} kB`,
  );
  console.log(row('POST /v1/search (new jobs)', submits));
  console.log(row('GET /v1/search/{id}?output=json', fetches));
  console.log(row('bare Fastify route, same JSON', baseline));
  console.log(`cached-result fetch / bare route: ${(fetches.requests.average / baseline.requests.average).toFixed(2)}`);
} finally {
  await svc.kill(); // a clean stop would drain crawls parked at the slow origin

  await google.close();
  removeDir(data);
}
// the origin's parked answers hold timers for ten minutes; nothing is left to wait for
process.exit(0);
