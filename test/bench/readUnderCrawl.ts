/**
 * `/v1` read latency while crawls run (docs/benchmarks.md#reads-under-crawl): a service on a listening port crawls a burst of jobs from
 * the fake Google origin while a probe reads a finished result (`GET /v1/search/{id}?output=json`) at a fixed rate;
 * the same probe runs first on the idle service. Three configurations, alternated over rounds, each a fresh process
 * on a fresh data directory with the same load: pages parsed on the event loop (SERP_PIPELINE_THREAD=0
 * SERP_PARSE_THREADS=0, the baseline: what the service did before the parse pool), the parse pool with the write side on
 * the event loop (SERP_PIPELINE_THREAD=0, the default until the pipeline thread), and the whole write side on a
 * thread of its own (the pipeline thread, the default: one parse thread fewer). Prints p50 / p99 idle and under crawl,
 * and p99 under crawl ÷ p99 idle. `--modes loop,pool,pipeline-thread` runs some of them.
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
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startBuiltService } from '../support/builtService.js';
import { startFakeGoogleProcess } from '../support/fakeGoogleProcess.js';
import { fixturesMissing } from '../support/fixtures.js';
import { pollJob, removeDir, submit, tempDataDir } from '../support/service.js';

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
const nodeArgs = (process.env.SERP_TEST_NODE_ARGS ?? '').split(' ').filter(Boolean);

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
};

const PROBE = new URL('./readProbe.ts', import.meta.url);
/** reads a second: a busy client's polling, well under what the idle service answers (~9,000 a second here) */
const PROBE_RATE = 200;

/** bytes a probe read took, on average (the last probe run): the answer is read in full */
let probeBytes = 0;

/**
 * The probe reading `url` at PROBE_RATE in a process of its own (readProbe.ts) while `phase` runs; each read's ms.
 * Its event loop does only this: the bench's own (submits, polls) would otherwise add its delays to the reads.
 */
const probe = async (url: string, key: string, phase: () => Promise<unknown>) => {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(PROBE), url, key, String(PROBE_RATE)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  const ready = new Promise<void>((resolve) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve();
    });
  });
  const exited = once(child, 'exit');
  await Promise.race([ready, exited]);
  await phase();
  child.stdin.end();
  const [code] = (await exited) as [number | null];
  if (code !== 0) throw new Error(`read probe exited with ${code}`);
  const { times, bytes } = JSON.parse(out.slice(out.indexOf('\n') + 1)) as { times: number[]; bytes: number };
  probeBytes = bytes;
  return times;
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
    await pollJob(svc.url, key, first.job_id);
    const target = `${svc.url}/v1/search/${first.job_id}?output=json`;
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    await probe(target, key, () => sleep(1_000)); // warm-up
    // as long as a crawl takes, so that p99 rests on as many reads on both sides
    const idle = await probe(target, key, () => sleep(8_000));

    let seconds = 0;
    const load = async () => {
      const t0 = Date.now();
      const ids = await Promise.all(
        Array.from({ length: jobs }, async (_, i) => {
          const res = await submit(svc.url, key, { keyword: `round ${round} keyword ${i}`, no_cache: true });
          return ((await res.json()) as { job_id: string }).job_id;
        }),
      );
      for (const id of ids) await (await pollJob(svc.url, key, id, 'json', 300_000)).arrayBuffer();
      seconds = (Date.now() - t0) / 1000;
    };
    const busy = await probe(target, key, load);
    return { idle, busy, seconds };
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

const allModes: { key: string; name: string; env: Record<string, string> }[] = [
  {
    key: 'loop',
    name: 'parse on the event loop (SERP_PIPELINE_THREAD=0 SERP_PARSE_THREADS=0)',
    env: { SERP_PIPELINE_THREAD: '0', SERP_PARSE_THREADS: '0' },
  },
  {
    key: 'pool',
    name: 'parse pool, a thread per core (SERP_PIPELINE_THREAD=0)',
    env: { SERP_PIPELINE_THREAD: '0', SERP_PARSE_THREADS: String(availableParallelism()) },
  },
  {
    key: 'pipeline-thread',
    name: 'pipeline thread and one parse thread fewer (the default)',
    env: { SERP_PARSE_THREADS: String(Math.max(1, availableParallelism() - 1)), SERP_PIPELINE_THREAD: '1' },
  },
];
const wanted = values.modes.split(',').map((m) => m.trim());
const modes = allModes.filter((m) => wanted.includes(m.key));
if (modes.length === 0) throw new Error(`--modes takes some of ${allModes.map((m) => m.key).join(',')}`);
const sums = new Map<string, { idle: number[]; busy: number[]; seconds: number }>();
for (let r = 0; r < rounds; r++) {
  for (const m of r % 2 === 0 ? modes : [...modes].reverse()) {
    const f = await run(m.env, r);
    const acc = sums.get(m.name) ?? { idle: [], busy: [], seconds: 0 };
    acc.idle.push(...f.idle);
    acc.busy.push(...f.busy);
    acc.seconds += f.seconds;
    sums.set(m.name, acc);
    console.log(
      `round ${r + 1}, ${m.name}: idle p99 ${quantile(f.idle, 0.99).toFixed(1)} ms, under crawl p99 ${quantile(f.busy, 0.99).toFixed(1)} ms (${jobs} jobs in ${f.seconds.toFixed(1)} s)`,
    );
  }
}
console.log(
  `\n${jobs} jobs of ten pages, crawler concurrency 8, reads of ${(probeBytes / 1024).toFixed(0)} kB at ${PROBE_RATE} a second; ${rounds} rounds`,
);
for (const [name, f] of sums) {
  const idle99 = quantile(f.idle, 0.99);
  const busy99 = quantile(f.busy, 0.99);
  console.log(
    `${name}: idle p50 ${quantile(f.idle, 0.5).toFixed(1)} / p99 ${idle99.toFixed(1)} ms; under crawl p50 ${quantile(f.busy, 0.5).toFixed(1)} / p99 ${busy99.toFixed(1)} ms: p99 ${(busy99 / idle99).toFixed(2)}x idle; crawl ${(f.seconds / rounds).toFixed(1)} s`,
  );
}
