/**
 * Compat surface against /v1 (autocannon, real sockets, same run): a cached search (SerpApi's synchronous
 * `GET /search.json` against `POST /v1/search` with `async: false`, both answered from the cache, both appending the
 * cache-hit event) and a stored search by id (`/searches/{id}.json` against `GET /v1/search/{id}?output=compat`).
 * Both sides render SerpApi's envelope, so the ratio is what the compat routing, query mapping, pagination links and
 * signed raw-HTML link cost. The sides alternate which runs first, round by round, and no ratio is printed when
 * either had a non-2xx answer or an error (compare.ts). Run: npx tsx test/bench/compat.ts [seconds] [rounds]
 */
import autocannon from 'autocannon';
import { startFakeGoogle } from '../support/fakeGoogle.js';
import { cli, pollJob, removeDir, startService, submit, tempDataDir } from '../support/service.js';
import { alternate, autocannonRow, machineNote, printRatio, requestsPerSecond, total } from './compare.js';

const seconds = Number(process.argv[2] ?? 10);
const rounds = Number(process.argv[3] ?? 2);
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
  const done = (await (await pollJob(svc.url, key, first.job_id, 'json', 120_000)).json()) as {
    search_metadata?: { status?: string };
  };
  if (done.search_metadata?.status !== 'done')
    throw new Error(`the first search ended ${done.search_metadata?.status}`);

  // num=100: the whole merged result, as /v1 renders it (without num, compat answers Google's first page)
  const searches = await alternate(rounds, {
    compat: () => run({ url: `${svc.url}/search.json?engine=google&q=coffee&num=100&api_key=${key}` }),
    v1: () =>
      run({
        url: `${svc.url}/v1/search?output=compat`,
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ keyword: 'coffee', async: false }),
      }),
  });
  const byId = await alternate(rounds, {
    compat: () => run({ url: `${svc.url}/searches/${first.job_id}.json?api_key=${key}` }),
    v1: () => run({ url: `${svc.url}/v1/search/${first.job_id}?output=compat`, headers: { 'x-api-key': key } }),
  });

  console.log(
    `\nCompat benchmark: ${seconds}s per run, 16 connections, a 94-result search from the cache, ${rounds} rounds (first side alternated); ${machineNote()}`,
  );
  const report = (
    what: string,
    names: [string, string],
    sides: { compat: autocannon.Result[]; v1: autocannon.Result[] },
  ) => {
    sides.compat.forEach((r, i) => {
      console.log(autocannonRow(`round ${i + 1}: ${names[0]}`, r, 52));
      console.log(autocannonRow(`round ${i + 1}: ${names[1]}`, sides.v1[i]!, 52));
    });
    printRatio(
      `${what}, compat / v1 throughput`,
      total(sides.compat.map(requestsPerSecond)),
      total(sides.v1.map(requestsPerSecond)),
      ['compat', 'v1'],
    );
  };
  report('cached search', ['GET /search.json (cached, sync)', 'POST /v1/search async:false output=compat'], searches);
  report('search by id', ['GET /searches/{id}.json', 'GET /v1/search/{id}?output=compat'], byId);
} finally {
  await svc.stop();
  await google.close();
  removeDir(data);
}
