/**
 * Latency benchmark (docs/benchmarks.md#parallel-result-pages): how long one top-100 job takes, submit to done, through
 * the whole embedded service (POST /v1/search over a real socket, events, queue, crawl, parse, projections; done = GET
 * /v1/search/{id} says so), one job at a time against the fake Google origin with a fixed latency per page. Two
 * settings in the same run, alternated job by job so both see the same machine:
 *  - `one by one` (the baseline, the crawler before parallel pages): SERP_PAGES_IN_FLIGHT=1
 *  - `parallel`: the default (page 1 alone, then five pages at once)
 * Three searches per setting: a full ten pages, a result set that ends on page 4 (the no-results page at start=30),
 * and a stop_domain that first shows on page 4. It prints the median time, the origin requests per job (how many
 * pages past the answer were asked for) and the ratio. It asserts nothing.
 *
 *   npx tsx test/bench/latency.ts [--latency 300,1000] [--rounds 3]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startEmbedded } from '../../services/compose/embedded/embedded.js';
import { loadConfig } from '../../services/config/config.js';
import { DEFAULT_PAGES, type FakeGoogle, startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { UNPACED } from '../support/service.js';

const { values } = parseArgs({
  options: {
    latency: { type: 'string', default: '300,1000' },
    rounds: { type: 'string', default: '3' },
  },
});
const latencies = values.latency.split(',').map(Number);
const rounds = Number(values.rounds);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] ?? 0;
};

interface Search {
  name: string;
  body: Record<string, unknown>;
}
const SEARCHES: Search[] = [
  { name: 'top 100 (10 pages)', body: { keyword: 'full' } },
  { name: 'ends on page 4', body: { keyword: 'short' } },
  { name: 'stop_domain on page 4', body: { keyword: 'folders', stop_domain: 'amazon.com' } },
];

const startService = async (google: FakeGoogle, pagesInFlight: number) => {
  const dir = await mkdtemp(join(tmpdir(), 'serp-bench-latency-'));
  const config = loadConfig(
    {
      SERP_GOOGLE_ORIGIN: google.origin,
      SERP_FETCHER: 'http',
      SERP_LOG_LEVEL: 'warn',
      ...UNPACED,
      SERP_PAGES_IN_FLIGHT: String(pagesInFlight),
      SERP_STOP_DOMAIN_PAGES_IN_FLIGHT: pagesInFlight === 1 ? '1' : '',
    },
    { port: 0, dataDir: dir, host: '127.0.0.1' },
  );
  const svc = await startEmbedded(config, { logger: false });
  const { key } = await svc.core.keys.create({ tier: 'enterprise', rateLimitPerMin: 1_000_000 });
  return {
    svc,
    key,
    async close() {
      await svc.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
};

/** submit, then poll every 10 ms until the job is terminal: the time a client waits */
const timeJob = async (url: string, key: string, body: Record<string, unknown>): Promise<number> => {
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/search`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, no_cache: true, capture_aio: false }),
  });
  const { job_id } = (await res.json()) as { job_id: string };
  for (;;) {
    const poll = await fetch(`${url}/v1/search/${job_id}`, { headers: { 'x-api-key': key } });
    await poll.arrayBuffer();
    if (poll.status !== 202) return performance.now() - t0;
    await new Promise((r) => setTimeout(r, 10));
  }
};

const reason = fixturesMissing();
if (reason) {
  console.log(`# latency: skipped, ${reason}`);
  process.exit(0);
}

const modes = [
  { name: 'one by one', pagesInFlight: 1 },
  { name: 'parallel', pagesInFlight: 5 },
] as const;

console.log(`# latency: one job at a time, ${rounds} rounds, modes alternated job by job`);
console.log(
  '| page latency | search | one by one: median s | parallel: median s | speed-up | origin requests per job: one by one → parallel (aborted) |',
);
console.log('|---|---|---|---|---|---|');
for (const latencyMs of latencies) {
  const google = await startFakeGoogle({ latencyMs, queries: { short: DEFAULT_PAGES.slice(0, 3) } });
  const services = await Promise.all(modes.map((m) => startService(google, m.pagesInFlight)));
  for (const search of SEARCHES) {
    const times: number[][] = modes.map(() => []);
    const requests: number[][] = modes.map(() => []);
    const aborted: number[] = [];
    for (let round = 0; round < rounds; round++) {
      for (let m = 0; m < modes.length; m++) {
        const { svc, key } = services[m]!;
        google.requests.length = 0;
        times[m]!.push(await timeJob(svc.url, key, search.body));
        // an aborted page's close reaches the origin a moment after the job is done
        await new Promise((r) => setTimeout(r, 50));
        const searches = google.searches();
        requests[m]!.push(searches.length);
        if (m === 1) aborted.push(searches.filter((r) => r.aborted).length);
      }
    }
    const [seq, par] = times.map(median) as [number, number];
    console.log(
      `| ${latencyMs} ms | ${search.name} | ${(seq / 1000).toFixed(2)} | ${(par / 1000).toFixed(2)} | ` +
        `${(seq / par).toFixed(2)}× | ${median(requests[0]!)} → ${median(requests[1]!)} (${median(aborted)}) |`,
    );
  }
  await Promise.all(services.map((s) => s.close()));
  await google.close();
}
