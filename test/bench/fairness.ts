/**
 * Fair share at volume (docs/benchmarks.md#fair-share): does one key's backlog, or a key's own monitor run, hold up
 * another search? The embedded service as a user runs it (`serp-api serve` in a child process, real HTTP), against
 * the fake Google answering every page after a fixed latency, with the crawler's default concurrency. Two sides, a
 * fresh service and data directory each, alternated round by round (compare.ts):
 *  - `fcfs`: SERP_FAIR_SHARE=0, one queue first come first served (the service before lanes);
 *  - `fair`: the default (lanes, fair share between keys, the fair dispatcher).
 * Per side and round:
 *  1. idle: a one-page live search (`depth: 10`, polled every 20 ms until it ends) on the idle service, after a
 *     warm-up, five times; the median;
 *  2. behind a backlog: key A submits `--backlog` top-100 searches (live: no priority given), then key B the same
 *     one-page search; its time, and how many times the idle one; then until A's backlog is done: the mixed load's
 *     throughput (pages a second from A's first submit to the last job's end);
 *  3. behind its own monitor: key B creates a monitor of `--monitor` keywords (top 100 each) and runs it by hand, then
 *     submits the one-page search; its time and multiple; then until the run ends.
 * It prints each figure per side, the ratios fair/fcfs, and whether both backlogs completed (a job not done counts
 * as a failure, and a side with failures gets no ratio). It asserts nothing.
 *
 *   npx tsx test/bench/fairness.ts [--latency 300] [--backlog 150] [--monitor 120] [--rounds 1]
 *   npx tsx test/bench/fairness.ts --paced [--proxies 4] [--backlog 12] [--monitor 12]   # pacing on, adversary
 */
import { parseArgs } from 'node:util';
import { type FakeGoogle, startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { startProxies } from '../support/proxies.js';
import { cli, removeDir, startService, tempDataDir } from '../support/service.js';
import { alternate, type Figure, machineNote, medianOf, ratio } from './compare.js';

const { values } = parseArgs({
  options: {
    latency: { type: 'string', default: '300' },
    backlog: { type: 'string' },
    monitor: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    paced: { type: 'boolean', default: false },
    proxies: { type: 'string', default: '4' },
  },
});
const paced = values.paced;
const latencyMs = Number(values.latency);
const backlog = Number(values.backlog ?? (paced ? 12 : 150));
const monitorKeywords = Number(values.monitor ?? (paced ? 12 : 120));
const rounds = Number(values.rounds);

if (fixturesMissing('serp')) {
  console.error('the fixture pages are missing (../shared/fixtures or SERP_FIXTURES_DIR)');
  process.exit(1);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? 0;

interface Outcome {
  idleMs: number;
  behindBacklogMs: number;
  behindMonitorMs: number;
  /** pages a second over the mixed load (A's backlog and B's search) */
  throughput: number;
  backlogSeconds: number;
  monitorSeconds: number;
  /** jobs that did not end done (the live searches, the backlog, the monitor's) */
  failures: number;
  /** how they ended */
  notDone: string;
}

const json = async (res: Response) => (await res.json().catch(() => ({}))) as Record<string, unknown>;

const run = async (google: FakeGoogle, proxies: string[], fair: boolean): Promise<Outcome> => {
  const data = tempDataDir('bench-fairness');
  const svc = await startService(data, {
    SERP_GOOGLE_ORIGIN: google.origin,
    SERP_FAIR_SHARE: fair ? '1' : '0',
    ...(paced
      ? { SERP_ROUTE_MAX_RPM: '20', SERP_ROUTE_COOLDOWN_S: '60', SERP_ROUTE_COOLDOWN_MAX_S: '1800' }
      : { SERP_ROUTE_MAX_RPM: '0' }),
    ...(proxies.length ? { SERP_PROXY_URLS: proxies.join(',') } : {}),
  });
  let failures = 0;
  const notDone = new Map<string, number>();
  try {
    const mint = async (tier: string) =>
      (JSON.parse(await cli(['keys', 'create', '--tier', tier, '--json', '--data', data])) as { key: string }).key;
    const a = await mint('enterprise');
    const b = await mint('enterprise');
    const headers = (key: string) => ({ 'x-api-key': key, 'content-type': 'application/json' });
    let n = 0;
    /**
     * one live one-page search, submit to its answer: polled every 20 ms (a wait of minutes behind a backlog would
     * outlast `async: false`'s 55 s)
     */
    const liveSearch = async () => {
      const started = performance.now();
      const submitted = await fetch(`${svc.url}/v1/search`, {
        method: 'POST',
        headers: headers(b),
        body: JSON.stringify({ keyword: `live ${fair} ${n++}`, depth: 10, no_cache: true }),
      });
      const id = String((await json(submitted)).job_id);
      let res: Response;
      for (;;) {
        res = await fetch(`${svc.url}/v1/search/${id}?output=json`, { headers: { 'x-api-key': b } });
        if (res.status === 429) {
          await res.arrayBuffer();
          await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
          continue;
        }
        if (res.status !== 202) break;
        await res.arrayBuffer();
        await sleep(20);
      }
      const took = performance.now() - started;
      const body = await json(res);
      const meta = body.search_metadata as { status?: string } | undefined;
      if (res.status !== 200 || meta?.status !== 'done') {
        failures += 1;
        const why = `live search ${res.status} ${meta?.status ?? String(body.detail ?? '')}`;
        notDone.set(why, (notDone.get(why) ?? 0) + 1);
      }
      return took;
    };
    /** waits until every job ended (a monitor's job answers 404 until it is submitted); counts those not done */
    const allEnded = async (key: string, jobIds: string[]) => {
      const left = new Set(jobIds);
      while (left.size > 0) {
        for (const id of [...left]) {
          const res = await fetch(`${svc.url}/v1/search/${id}`, { headers: { 'x-api-key': key } });
          const body = await json(res);
          // polling 150 jobs four times a second can pass the key's read ceiling: wait as a client should
          if (res.status === 429) {
            await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
            continue;
          }
          if (res.status === 202 || res.status === 404) continue;
          left.delete(id);
          if (body.status !== 'done') {
            failures += 1;
            const why = `${body.status ?? res.status}${body.detail ? `: ${String(body.detail).slice(0, 80)}` : ''}`;
            notDone.set(why, (notDone.get(why) ?? 0) + 1);
          }
        }
        if (left.size > 0) await sleep(250);
      }
      return performance.now();
    };

    // a warm-up (the first search opens the route's session and warms the parse threads), then the idle figure
    await liveSearch();
    const idle: number[] = [];
    for (let i = 0; i < 5; i++) idle.push(await liveSearch());
    const idleMs = median(idle);

    // 2. another key's backlog of top-100 searches, submitted as a data team would (no priority given)
    const t0 = performance.now();
    const backlogIds = await Promise.all(
      Array.from({ length: backlog }, async (_, i) => {
        const res = await fetch(`${svc.url}/v1/search`, {
          method: 'POST',
          headers: headers(a),
          body: JSON.stringify({ keyword: `backlog ${fair} ${i}`, no_cache: true }),
        });
        return String((await json(res)).job_id);
      }),
    );
    const behindBacklogMs = await liveSearch();
    const backlogEnd = await allEnded(a, backlogIds);
    const pages = backlog * 10 + 1;
    const throughput = pages / ((backlogEnd - t0) / 1000);

    // 3. the same key's own monitor, run by hand
    const created = await fetch(`${svc.url}/v1/monitors`, {
      method: 'POST',
      headers: headers(b),
      body: JSON.stringify({
        name: 'bench',
        keywords: Array.from({ length: monitorKeywords }, (_, i) => `monitor ${fair} ${i}`),
        domains: ['example.com'],
        schedule: 'daily',
      }),
    });
    const monitorId = String((await json(created)).monitor_id);
    const m0 = performance.now();
    const runRes = await fetch(`${svc.url}/v1/monitors/${monitorId}/runs`, {
      method: 'POST',
      headers: headers(b),
      body: '{}',
    });
    const runJobs = ((await json(runRes)).jobs ?? []) as Array<{ job_id: string }>;
    if (runRes.status !== 202 || runJobs.length !== monitorKeywords) failures += monitorKeywords;
    // the run submits its searches at the key's rate: the live search goes once a good part of it is queued
    await sleep(Math.min(3000, monitorKeywords * 25));
    const behindMonitorMs = await liveSearch();
    const monitorSeconds =
      ((await allEnded(
        b,
        runJobs.map((j) => j.job_id),
      )) -
        m0) /
      1000;
    return {
      idleMs,
      behindBacklogMs,
      behindMonitorMs,
      throughput,
      backlogSeconds: (backlogEnd - t0) / 1000,
      monitorSeconds,
      failures,
      notDone: [...notDone].map(([why, n]) => `${n}× ${why}`).join('; '),
    };
  } finally {
    await svc.stop();
    removeDir(data);
  }
};

const google = await startFakeGoogle({
  latencyMs,
  // Google's per-address limit, a little above the pace the service keeps (20 a minute a route)
  ...(paced ? { adversary: { rateLimit: { perWindow: 25, windowMs: 60_000, banMs: 60_000 } } } : {}),
});
const proxies = paced ? await startProxies(Number(values.proxies)) : undefined;
console.log(
  `fair share: ${backlog} top-100 searches of another key, a monitor of ${monitorKeywords} keywords, fake Google at ${latencyMs} ms a page${paced ? `, paced, ${values.proxies} proxies (adversary)` : ', unpaced'}; ${machineNote()}`,
);
const results = await alternate(
  rounds,
  {
    fcfs: () => run(google, proxies?.urls ?? [], false),
    fair: () => run(google, proxies?.urls ?? [], true),
  },
  (round, r) => {
    for (const [side, o] of Object.entries(r)) {
      console.log(
        `round ${round} ${side.padEnd(4)}: idle ${o.idleMs.toFixed(0)} ms; behind the backlog ${o.behindBacklogMs.toFixed(0)} ms (${(o.behindBacklogMs / o.idleMs).toFixed(1)}× idle); behind its monitor ${o.behindMonitorMs.toFixed(0)} ms (${(o.behindMonitorMs / o.idleMs).toFixed(1)}× idle); backlog ${o.backlogSeconds.toFixed(1)} s, ${o.throughput.toFixed(1)} pages/s; monitor run ${o.monitorSeconds.toFixed(1)} s; not done ${o.failures}${o.notDone ? ` (${o.notDone})` : ''}`,
      );
    }
  },
);
await proxies?.close();
await google.close();

const fig = (side: Outcome[], pick: (o: Outcome) => number): Figure =>
  medianOf(side.map((o) => ({ value: pick(o), failures: o.failures })));
const times = (side: Outcome[], pick: (o: Outcome) => number) => fig(side, (o) => pick(o) / o.idleMs);
for (const [label, pick] of [
  ['behind the backlog, × idle', (o: Outcome) => o.behindBacklogMs],
  ['behind its monitor, × idle', (o: Outcome) => o.behindMonitorMs],
] as const) {
  const f = times(results.fair, pick);
  const c = times(results.fcfs, pick);
  console.log(
    `${label}: fair ${f.value.toFixed(2)}×, fcfs ${c.value.toFixed(2)}× (fair/fcfs ${ratio(f, c, ['fair', 'fcfs'])})`,
  );
}
const tf = fig(results.fair, (o) => o.throughput);
const tc = fig(results.fcfs, (o) => o.throughput);
console.log(
  `mixed load throughput: fair ${tf.value.toFixed(1)} pages/s, fcfs ${tc.value.toFixed(1)} pages/s (fair/fcfs ${ratio(tf, tc, ['fair', 'fcfs'])})`,
);
