/**
 * `/v1` read latency while crawls run (issue 14, item 3): a service on a listening port crawls a burst of jobs from
 * the fake Google origin while four probes fetch a finished result (`GET /v1/search/{id}?output=json`) back to back;
 * the same probes run first on the idle service. Once with pages parsed on the event loop (SERP_PARSE_THREADS=0, the
 * baseline: what the service did before) and once with the parse pool (the default: a thread per core), alternated
 * over rounds; each service is a fresh process on a fresh data directory with the same load. Prints p50 / p99 idle
 * and under crawl, and p99 under crawl ÷ p99 idle for both.
 *
 * The service is the build, as `npm start` runs it (`node bin/serp-api.js serve`): `tsc -p tsconfig.build.json` in
 * `--root` first, skipped with `--no-build`; `--root DIR` measures another checkout's build, for a before/after.
 * (Run from the sources through tsx, the service also carries the loader and every module's source map.)
 * `npx tsx test/bench/readUnderCrawl.ts [jobs] [rounds] [--root DIR] [--no-build]`. Prints figures only; never
 * asserts a time. SERP_TEST_NODE_ARGS gives the service node flags (`--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startBuiltService } from '../support/builtService.js';
import { startFakeGoogleProcess } from '../support/fakeGoogleProcess.js';
import { fixturesMissing } from '../support/fixtures.js';
import { pollJob, removeDir, submit, tempDataDir } from '../support/service.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { root: { type: 'string', default: '.' }, 'no-build': { type: 'boolean', default: false } },
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

/** four probes reading `url` back to back until `until()` says stop; each request's ms */
const probe = async (url: string, key: string, until: () => boolean) => {
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (!until()) {
        const t0 = performance.now();
        const res = await fetch(url, { headers: { 'x-api-key': key } });
        await res.arrayBuffer();
        times.push(performance.now() - t0);
      }
    }),
  );
  return times;
};

const run = async (parseThreads: string, round: number) => {
  // Google in a process of its own: the probes' own event loop must not be the one serving its pages
  const google = await startFakeGoogleProcess(20);
  const data = tempDataDir('read-under-crawl');
  const svc = await startBuiltService(
    root,
    data,
    {
      SERP_GOOGLE_ORIGIN: google.origin,
      SERP_PARSE_THREADS: parseThreads,
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
    await probe(
      target,
      key,
      (() => {
        const end = Date.now() + 1_000;
        return () => Date.now() > end;
      })(),
    ); // warm-up
    const idleEnd = Date.now() + 4_000;
    const idle = await probe(target, key, () => Date.now() > idleEnd);

    let finished = false;
    const load = (async () => {
      const ids = await Promise.all(
        Array.from({ length: jobs }, async (_, i) => {
          const res = await submit(svc.url, key, { keyword: `round ${round} keyword ${i}`, no_cache: true });
          return ((await res.json()) as { job_id: string }).job_id;
        }),
      );
      for (const id of ids) await pollJob(svc.url, key, id, 'json', 300_000);
      finished = true;
    })();
    const t0 = Date.now();
    const busy = await probe(target, key, () => finished);
    await load;
    return { idle, busy, seconds: (Date.now() - t0) / 1000 };
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

const modes = [
  { name: 'parse on the event loop (SERP_PARSE_THREADS=0)', threads: '0' },
  { name: 'parse pool (default: a thread per core)', threads: '' },
];
const sums = new Map<string, { idle: number[]; busy: number[]; seconds: number }>();
for (let r = 0; r < rounds; r++) {
  for (const m of r % 2 === 0 ? modes : [...modes].reverse()) {
    const env = m.threads === '' ? String(availableParallelism()) : m.threads;
    const f = await run(env, r);
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
console.log(`\n${jobs} jobs of ten pages, crawler concurrency 8, four probes; ${rounds} rounds`);
for (const [name, f] of sums) {
  const idle99 = quantile(f.idle, 0.99);
  const busy99 = quantile(f.busy, 0.99);
  console.log(
    `${name}: idle p50 ${quantile(f.idle, 0.5).toFixed(1)} / p99 ${idle99.toFixed(1)} ms; under crawl p50 ${quantile(f.busy, 0.5).toFixed(1)} / p99 ${busy99.toFixed(1)} ms: p99 ${(busy99 / idle99).toFixed(2)}x idle; crawl ${(f.seconds / rounds).toFixed(1)} s`,
  );
}
