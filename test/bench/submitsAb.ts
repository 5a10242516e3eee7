/**
 * Submits per second of two builds of the service, alternated in one run (docs/benchmarks.md#submits): each round
 * starts a fresh `serve` of build A and of build B on fresh data directories against a fake Google that never answers
 * (so crawls park and the run measures the API, the event store and the projections), fires autocannon at `POST
 * /v1/search` (32 connections, new keywords, `no_cache`), and reads the service's CPU time from /proc. Prints each
 * round and the medians of A/B submits per second and B/A CPU per submit: a change's effect when the machine's speed
 * drifts from minute to minute. Linux only (/proc). Prints figures only; never asserts a time.
 *
 *   npm run build                                      # build A: this checkout
 *   git worktree add ../prev <commit> && ln -s "$PWD/node_modules" ../prev/ && (cd ../prev && npx tsc -p
 *   tsconfig.build.json)
 *   npx tsx test/bench/submitsAb.ts . ../prev [rounds=5] [seconds=6]
 *
 * SUBMITS_A_NODE_ARGS / SUBMITS_B_NODE_ARGS give either side node flags of its own (space-separated), and
 * SUBMITS_A_ENV / SUBMITS_B_ENV variables of its own (`SUBMITS_B_ENV=SERP_PIPELINE_THREAD=0`), so one build can
 * be compared with itself under a V8 setting or a configuration: `SUBMITS_A_NODE_ARGS=--max-semi-space-size=64 …
 * submitsAb.ts . .`.
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { startBuiltService } from '../support/builtService.js';
import { startFakeGoogle } from '../support/fakeGoogle.js';
import { cli, removeDir, tempDataDir } from '../support/service.js';

const [rootA, rootB, roundsArg, secondsArg] = process.argv.slice(2);
if (!rootA || !rootB) {
  console.log('usage: npx tsx test/bench/submitsAb.ts ROOT_A ROOT_B [rounds] [seconds] (each root built: dist/)');
  process.exit(0);
}
const rounds = Number(roundsArg ?? 5);
const seconds = Number(secondsArg ?? 6);
const google = await startFakeGoogle({});
google.setMode({ latencyMs: 600_000 });

/** user + system CPU of a process so far, in ms (all its threads) */
const cpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

const nodeArgsOf = (side: 'A' | 'B') => (process.env[`SUBMITS_${side}_NODE_ARGS`] ?? '').split(' ').filter(Boolean);
/** SUBMITS_A_ENV / SUBMITS_B_ENV: variables of that side's service (`SERP_PIPELINE_THREAD=0`), space-separated */
const envOf = (side: 'A' | 'B') =>
  Object.fromEntries(
    (process.env[`SUBMITS_${side}_ENV`] ?? '')
      .split(' ')
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );

const once = async (root: string, nodeArgs: string[], env: Record<string, string>) => {
  const data = tempDataDir('submits-ab');
  const key = JSON.parse(
    await cli(['keys', 'create', '--tier', 'enterprise', '--rate', '100000000', '--json', '--data', data]),
  ).key as string;
  const svc = await startBuiltService(
    root,
    data,
    {
      SERP_GOOGLE_ORIGIN: google.origin,
      SERP_CRAWLER_CONCURRENCY: '2',
      ...env,
    },
    nodeArgs,
  ).catch((err) => {
    removeDir(data);
    throw err;
  });
  const { url, child } = svc;
  try {
    let n = 0;
    const before = cpuMs(child.pid!);
    const res = await new Promise<autocannon.Result>((ok, fail) =>
      autocannon(
        {
          url: `${url}/v1/search`,
          method: 'POST',
          duration: seconds,
          connections: 32,
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          requests: [
            {
              setupRequest: (req) => ({ ...req, body: JSON.stringify({ keyword: `ab ${n++}`, no_cache: true }) }),
            },
          ],
        },
        (e, r) => (e ? fail(e) : ok(r)),
      ),
    );
    return {
      perS: res.requests.average,
      cpuUsPerSubmit: ((cpuMs(child.pid!) - before) * 1000) / Math.max(1, res.requests.total),
      non2xx: res.non2xx,
    };
  } finally {
    await svc.kill();
    removeDir(data);
  }
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const speed: number[] = [];
const cpu: number[] = [];
for (let i = 0; i < rounds; i++) {
  // alternate who goes first, so neither always meets the warmer machine
  let a: Awaited<ReturnType<typeof once>>;
  let b: Awaited<ReturnType<typeof once>>;
  if (i % 2 === 0) {
    a = await once(rootA, nodeArgsOf('A'), envOf('A'));
    b = await once(rootB, nodeArgsOf('B'), envOf('B'));
  } else {
    b = await once(rootB, nodeArgsOf('B'), envOf('B'));
    a = await once(rootA, nodeArgsOf('A'), envOf('A'));
  }
  speed.push(a.perS / b.perS);
  cpu.push(b.cpuUsPerSubmit / a.cpuUsPerSubmit);
  console.log(
    `round ${i + 1}: A ${a.perS.toFixed(0)}/s ${a.cpuUsPerSubmit.toFixed(0)} µs CPU/submit (non-2xx ${a.non2xx}) | B ${b.perS.toFixed(0)}/s ${b.cpuUsPerSubmit.toFixed(0)} µs CPU/submit (non-2xx ${b.non2xx})`,
  );
}
console.log(
  `\nA = ${rootA}, B = ${rootB}, ${rounds} rounds of ${seconds} s: median A/B submits/s ${median(speed).toFixed(2)}, median B/A CPU per submit ${median(cpu).toFixed(2)}`,
);
await google.close();
process.exit(0);
