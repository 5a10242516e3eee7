/**
 * Compat surface against /v1 (autocannon, real sockets, same run): a cached search (SerpApi's synchronous
 * `GET /search.json` against `POST /v1/search` with `async: false`, both answered from the cache, both appending the
 * cache-hit event) and a stored search by id (`/searches/{id}.json` against `GET /v1/search/{id}?output=compat`).
 * Both sides render SerpApi's envelope, so the ratio is what the compat routing, query mapping, pagination links and
 * signed raw-HTML link cost. Run: npx tsx test/bench/compat.ts [seconds]
 */
import autocannon from 'autocannon';
import { startFakeGoogle } from '../support/fakeGoogle.js';
import { cli, pollJob, removeDir, startService, submit, tempDataDir } from '../support/service.js';

const seconds = Number(process.argv[2] ?? 10);
const run = (opts: autocannon.Options) =>
  new Promise<autocannon.Result>((resolve, reject) =>
    autocannon({ duration: seconds, connections: 16, ...opts }, (err, res) => (err ? reject(err) : resolve(res))),
  );

const google = await startFakeGoogle({});
const data = tempDataDir('bench');
const svc = await startService(data, { SERP_GOOGLE_ORIGIN: google.origin });
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
      '100000000',
      '--json',
      '--data',
      data,
    ]),
  ).key;
  const first = (await (await submit(svc.url, key, { keyword: 'coffee' })).json()) as { job_id: string };
  await (await pollJob(svc.url, key, first.job_id, 'json', 120_000)).arrayBuffer();

  // num=100: the whole merged result, as /v1 renders it (without num, compat answers Google's first page)
  const compatSearch = await run({ url: `${svc.url}/search.json?engine=google&q=coffee&num=100&api_key=${key}` });
  const v1Search = await run({
    url: `${svc.url}/v1/search?output=compat`,
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ keyword: 'coffee', async: false }),
  });
  const compatById = await run({ url: `${svc.url}/searches/${first.job_id}.json?api_key=${key}` });
  const v1ById = await run({
    url: `${svc.url}/v1/search/${first.job_id}?output=compat`,
    headers: { 'x-api-key': key },
  });

  const row = (name: string, r: autocannon.Result) =>
    `${name.padEnd(44)} ${r.requests.average.toFixed(0).padStart(7)} req/s   p50 ${String(r.latency.p50).padStart(4)} ms   p99 ${String(r.latency.p99).padStart(5)} ms   non-2xx ${r.non2xx}`;
  console.log(`\nCompat benchmark: ${seconds}s per run, 16 connections, a 94-result search from the cache`);
  console.log(row('GET /search.json (cached, sync)', compatSearch));
  console.log(row('POST /v1/search async:false output=compat', v1Search));
  console.log(row('GET /searches/{id}.json', compatById));
  console.log(row('GET /v1/search/{id}?output=compat', v1ById));
  console.log(
    `cached search, compat / v1: throughput ${(compatSearch.requests.average / v1Search.requests.average).toFixed(2)}, p50 latency ${(compatSearch.latency.p50 / Math.max(1, v1Search.latency.p50)).toFixed(2)}`,
  );
  console.log(
    `search by id, compat / v1: throughput ${(compatById.requests.average / v1ById.requests.average).toFixed(2)}, p50 latency ${(compatById.latency.p50 / Math.max(1, v1ById.latency.p50)).toFixed(2)}`,
  );
} finally {
  await svc.stop();
  await google.close();
  removeDir(data);
}
