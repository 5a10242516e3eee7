/**
 * Latency benchmark (docs/benchmarks.md#parallel-result-pages): how long one top-100 job takes, submit to done, through
 * the whole embedded service (POST /v1/search over a real socket, events, queue, crawl, parse, projections; done = GET
 * /v1/search/{id} says so), one job at a time against the fake Google origin with a fixed latency per page. Two
 * settings in the same run, alternated job by job so both see the same machine, the first changing each round
 * (compare.ts):
 *  - `one by one` (the baseline, the crawler before parallel pages): SERP_PAGES_IN_FLIGHT=1
 *  - `parallel`: the default (page 1 alone, then five pages at once)
 * Three searches per setting: a full ten pages, a result set that ends on page 4 (the no-results page at start=30),
 * and a stop_domain that first shows on page 4. It prints the median time, the origin requests per job (how many
 * pages past the answer were asked for) and the ratio, none when a job of either setting did not end done. It
 * asserts nothing.
 *
 *   npx tsx test/bench/latency.ts [--latency 300,1000] [--rounds 3]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { composeApplication } from '../../services/compose/application.js';
import { startEmbedded } from '../../services/compose/embedded/embedded.js';
import { loadConfig } from '../../services/config/config.js';
import { DEFAULT_PAGES, type FakeGoogle, startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { UNPACED } from '../support/service.js';
import { alternate, ratio } from './compare.js';

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
  const { key } = await composeApplication(svc.core, config).keys.create({
    tier: 'enterprise',
    rateLimitPerMin: 1_000_000,
  });
  return {
    svc,
    key,
    async close() {
      await svc.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
};

/** submit, then poll every 10 ms until the job is terminal: the time a client waits, and whether it ended done */
const timeJob = async (
  url: string,
  key: string,
  body: Record<string, unknown>,
): Promise<{ ms: number; done: boolean }> => {
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/search`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, no_cache: true, capture_aio: false }),
  });
  const { job_id } = (await res.json()) as { job_id: string };
  for (;;) {
    const poll = await fetch(`${url}/v1/search/${job_id}?output=json`, { headers: { 'x-api-key': key } });
    if (poll.status !== 202) {
      const ms = performance.now() - t0;
      const meta = ((await poll.json().catch(() => ({}))) as { search_metadata?: { status?: string } }).search_metadata;
      return { ms, done: poll.status === 200 && meta?.status === 'done' };
    }
    await poll.arrayBuffer();
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
    /** one job of mode `m`: its time, whether it ended done, the origin requests it made and how many were aborted */
    const one = async (m: number) => {
      const { svc, key } = services[m]!;
      google.requests.length = 0;
      const job = await timeJob(svc.url, key, search.body);
      // an aborted page's close reaches the origin a moment after the job is done
      await new Promise((r) => setTimeout(r, 50));
      const searches = google.searches();
      return { ...job, requests: searches.length, aborted: searches.filter((r) => r.aborted).length };
    };
    const sides = await alternate(rounds, { seq: () => one(0), par: () => one(1) });
    const figure = (runs: typeof sides.seq) => ({
      value: median(runs.map((r) => r.ms)),
      failures: runs.filter((r) => !r.done).length,
    });
    const [seq, par] = [figure(sides.seq), figure(sides.par)];
    const requests = (runs: typeof sides.seq) => median(runs.map((r) => r.requests));
    console.log(
      `| ${latencyMs} ms | ${search.name} | ${(seq.value / 1000).toFixed(2)} | ${(par.value / 1000).toFixed(2)} | ` +
        `${ratio(seq, par, ['one by one', 'parallel'])} | ${requests(sides.seq)} → ${requests(sides.par)} (${median(sides.par.map((r) => r.aborted))}) |`,
    );
  }
  await Promise.all(services.map((s) => s.close()));
  await google.close();
}
