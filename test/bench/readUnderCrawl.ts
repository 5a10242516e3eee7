/**
 * `/v1` read latency while crawls run (docs/benchmarks.md#reads-under-crawl): a service on a listening port crawls a
 * burst of jobs from the fake Google origin while a probe reads a finished result (`GET /v1/search/{id}?output=json`)
 * at a fixed rate; the same probe runs first on the idle service. Each configuration is a fresh process on a fresh
 * data directory with the same jobs, and the configurations alternate which runs first, round by round (compare.ts):
 *  - `loop`: pages parsed on the event loop (SERP_PIPELINE_THREAD=0 SERP_PARSE_THREADS=0), what the service did
 *    before the parse pool; its crawl is a different load (no parse threads), shown by its pages per second;
 *  - `pool`: the parse pool with the write side on the event loop (SERP_PIPELINE_THREAD=0);
 *  - `pipeline-thread`: the write side on a thread of its own (the default).
 * Equal load: `pool` and `pipeline-thread` get the same parse threads, the service's default count (one per core
 * but the pipeline thread's), so that "under crawl" is the same crawl for both; each mode's crawl rate (pages per
 * second, from the jobs' own metadata) is printed beside its p99 so a reader sees the load each read was under.
 * Prints p50 / p99 idle and under crawl, p99 under crawl ÷ p99 idle per mode, and pipeline-thread ÷ pool under
 * crawl; no ratio where a read failed or a job did not end done. `--modes loop,pool,pipeline-thread` runs some.
 *
 * The probe (readProbe.ts) runs in a process of its own with node:http, and is open loop: 200 reads a second, each
 * sent on schedule whether or not the ones before it have answered. Its first form, four readers back to back,
 * saturated the idle service (~9,000 reads a second: the "idle" baseline was a busy service) and let a stall of the
 * service delay only the four reads in flight, so the stalls a user meets while crawls run hardly reached p99.
 *
 * The service is the build, as `npm start` runs it (`node bin/serp-api.js serve`): `tsc -p tsconfig.build.json` in
 * `--root` first, skipped with `--no-build`; `--root DIR` measures another checkout's build, for a before/after.
 * (Run from the sources through tsx, the service also carries the loader and every module's source map.)
 * `npx tsx test/bench/readUnderCrawl.ts [jobs] [rounds] [--modes …] [--root DIR] [--no-build]`. Prints figures only;
 * never asserts a time. SERP_TEST_NODE_ARGS gives the service node flags (`--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../services/config/config.js';
import { loadTestSettings } from '../../services/config/tests.js';
import { startBuiltService } from '../support/builtService.js';
import { startFakeGoogleProcess } from '../support/fakeGoogleProcess.js';
import { fixturesMissing } from '../support/fixtures.js';
import { removeDir, submit, tempDataDir } from '../support/service.js';
import { alternate, type Figure, jobOutcome, machineNote, printRatio, quantile } from './compare.js';
import { PROBE_RATE, runReadProbe } from './probeRun.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    root: { type: 'string', default: '.' },
    'no-build': { type: 'boolean', default: false },
    modes: { type: 'string', default: 'loop,pool,pipeline-thread' },
  },
});
const jobs = Number(positionals[0] ?? 48);
const rounds = Number(positionals[1] ?? 2);
const root = resolve(values.root);
const missing = fixturesMissing();
if (missing) {
  console.log(`skipped: ${missing}`);
  process.exit(0);
}
const ADMIN = 'read-under-crawl-bench-admin-token';
if (!values['no-build']) execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
const nodeArgs = (loadTestSettings().testNodeArgs ?? '').split(' ').filter(Boolean);

/** bytes a probe read took, on average (the last probe run): the answer is read in full */
let probeBytes = 0;

/** the probe's reads while `phase` runs (probeRun.ts); each read's ms */
const probe = async (url: string, key: string, phase: () => Promise<unknown>) => {
  const { report } = await runReadProbe(url, key, phase);
  probeBytes = report.bytes;
  if (report.failures) console.log(`  failed reads: ${JSON.stringify(report.failureKinds)}`);
  return { times: report.times, failures: report.failures };
};

const run = async (modeEnv: Record<string, string>, round: number) => {
  // Google in a process of its own: the probes' own event loop must not be the one serving its pages
  const google = await startFakeGoogleProcess(20);
  const data = tempDataDir('read-under-crawl');
  const svc = await startBuiltService(
    root,
    data,
    {
      SERP_GOOGLE_ORIGIN: google.origin,
      ...modeEnv,
      SERP_CRAWLER_CONCURRENCY: '8',
      SERP_ADMIN_TOKEN: ADMIN,
    },
    nodeArgs,
  );
  try {
    const { key } = (await (
      await fetch(`${svc.url}/admin/api/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tier: 'pro', monthly_quota: 0, rate_limit_per_min: 100_000 }),
      })
    ).json()) as { key: string };
    const first = (await (await submit(svc.url, key, { keyword: 'coffee' })).json()) as { job_id: string };
    const ready = await jobOutcome(svc.url, key, first.job_id, 60_000);
    if (!ready.done) throw new Error(`the search the probe reads ended ${ready.status}`);
    const target = `${svc.url}/v1/search/${first.job_id}?output=json`;
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    await probe(target, key, () => sleep(1_000)); // warm-up
    // as long as a crawl takes, so that p99 rests on as many reads on both sides
    const idle = await probe(target, key, () => sleep(8_000));

    let seconds = 0;
    let pages = 0;
    let notDone = 0;
    const load = async () => {
      const t0 = Date.now();
      const ids = await Promise.all(
        Array.from({ length: jobs }, async (_, i) => {
          const res = await submit(svc.url, key, { keyword: `round ${round} keyword ${i}`, no_cache: true });
          return ((await res.json()) as { job_id: string }).job_id;
        }),
      );
      for (const id of ids) {
        const job = await jobOutcome(svc.url, key, id, 300_000);
        pages += job.pages;
        if (!job.done) notDone += 1;
      }
      seconds = (Date.now() - t0) / 1000;
    };
    const busy = await probe(target, key, load);
    return { idle, busy, seconds, pages, notDone };
  } finally {
    // a drain, not kill -9: a --cpu-prof profile is written on the way out
    const exited = once(svc.child, 'exit');
    svc.child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    await svc.kill();
    await google.close();
    removeDir(data);
  }
};

/** the service's parse threads by default, given to every mode that parses on threads: the same crawl load */
const parseThreads = loadConfig(process.env).parseThreads;
const allModes: { key: string; name: string; env: Record<string, string> }[] = [
  {
    key: 'loop',
    name: 'parse on the event loop (SERP_PIPELINE_THREAD=0 SERP_PARSE_THREADS=0)',
    env: { SERP_PIPELINE_THREAD: '0', SERP_PARSE_THREADS: '0' },
  },
  {
    key: 'pool',
    name: `parse pool, write side on the event loop (SERP_PIPELINE_THREAD=0 SERP_PARSE_THREADS=${parseThreads})`,
    env: { SERP_PIPELINE_THREAD: '0', SERP_PARSE_THREADS: String(parseThreads) },
  },
  {
    key: 'pipeline-thread',
    name: `pipeline thread, the default (SERP_PARSE_THREADS=${parseThreads})`,
    env: { SERP_PIPELINE_THREAD: '1', SERP_PARSE_THREADS: String(parseThreads) },
  },
];
const wanted = values.modes.split(',').map((m) => m.trim());
const modes = allModes.filter((m) => wanted.includes(m.key));
if (modes.length === 0) throw new Error(`--modes takes some of ${allModes.map((m) => m.key).join(',')}`);

type Run = Awaited<ReturnType<typeof run>>;
const results = await alternate(
  rounds,
  Object.fromEntries(modes.map((m) => [m.key, (round: number) => run(m.env, round)])) as Record<
    string,
    (round: number) => Promise<Run>
  >,
  (round, byMode) => {
    for (const m of modes) {
      const f = byMode[m.key]!;
      console.log(
        `round ${round + 1}, ${m.key}: idle p99 ${quantile(f.idle.times, 0.99).toFixed(1)} ms, under crawl p99 ${quantile(f.busy.times, 0.99).toFixed(1)} ms, crawl ${(f.pages / f.seconds).toFixed(1)} pages/s (${jobs} jobs in ${f.seconds.toFixed(1)} s, ${f.notDone} not done, ${f.idle.failures + f.busy.failures} failed reads)`,
      );
    }
  },
);

console.log(
  `\n${jobs} jobs of ten pages, crawler concurrency 8, reads of ${(probeBytes / 1024).toFixed(0)} kB at ${PROBE_RATE} a second; ${rounds} rounds, first mode alternated; ${machineNote()}`,
);
/** a mode's reads over all its rounds: p99 as the figure; failed reads (and, under crawl, jobs not done) as failures */
const summary = (key: string) => {
  const runs = results[key]!;
  const idle = runs.flatMap((r) => r.idle.times);
  const busy = runs.flatMap((r) => r.busy.times);
  const idleFailures = runs.reduce((n, r) => n + r.idle.failures, 0);
  const busyFailures = runs.reduce((n, r) => n + r.busy.failures + r.notDone, 0);
  const pagesPerS = runs.reduce((n, r) => n + r.pages, 0) / runs.reduce((n, r) => n + r.seconds, 0);
  return {
    idle,
    busy,
    pagesPerS,
    idle99: { value: quantile(idle, 0.99), failures: idleFailures } satisfies Figure,
    busy99: { value: quantile(busy, 0.99), failures: busyFailures } satisfies Figure,
  };
};
for (const m of modes) {
  const f = summary(m.key);
  console.log(
    `${m.name}:\n  idle p50 ${quantile(f.idle, 0.5).toFixed(1)} / p99 ${f.idle99.value.toFixed(1)} ms; under crawl p50 ${quantile(f.busy, 0.5).toFixed(1)} / p99 ${f.busy99.value.toFixed(1)} ms at ${f.pagesPerS.toFixed(1)} pages/s crawled`,
  );
  printRatio('  p99 under crawl / p99 idle', f.busy99, f.idle99, ['under crawl', 'idle']);
}
if (results.pool && results['pipeline-thread']) {
  const [pool, pipeline] = [summary('pool'), summary('pipeline-thread')];
  printRatio(
    `p99 under crawl, pipeline thread / pool, at the same ${parseThreads} parse thread(s) (crawl ${pipeline.pagesPerS.toFixed(1)} vs ${pool.pagesPerS.toFixed(1)} pages/s)`,
    pipeline.busy99,
    pool.busy99,
    ['pipeline thread', 'pool'],
  );
}
