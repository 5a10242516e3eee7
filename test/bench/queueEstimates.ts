/**
 * Queue estimates against what happened (docs/benchmarks.md#queue-estimates): is the `queue.estimated_start_s` a user
 * is told true? The embedded service in this process (`startEmbedded`, real HTTP on a listening port), against the fake
 * Google answering every page after a fixed latency, unpaced, with the crawler's default concurrency. Per side and
 * round, a fresh service and data directory:
 *  1. a warm-up: one key's `--warm` top-100 bulk searches crawled to their end (the fleet has a pace, and a busiest
 *     minute, before the measure);
 *  2. the measure, a mixed backlog of several keys: key M a monitor of `--monitor` keywords run by hand (the scheduled
 *     lane), then, once the run's searches are all queued, at once key B1 `--bulk` top-100 bulk searches and key B2
 *     (pro) a third as many, and while they wait
 *     key L1 a one-page live search every 400 ms and key L2 a top-100 live search every second (`--live` each);
 *  3. for every job, the estimate it was given and when it started: a submit's estimate from its 202, a monitor's job
 *     (submitted by the run, not by a client) from its first poll's 202; its start from its `search_metadata`
 *     (`created_at` + `queued_ms`, the first Google request), counted from the moment the estimate was received.
 * The two sides do the same work, alternated round by round (compare.ts):
 *  - `now`: the estimate the service answers (services/fairShare/queuePosition.ts: the lane's recent pace);
 *  - `before`: the estimator as it was (queuePositionBefore.ts, following the same log in this process), asked as the
 *    service asked it then, at the moment the 202 arrived (`ofNew` for a submit, `of` for a poll).
 * `--dump FILE` writes every job's figures as JSON lines. It prints, per side, the median and p90 of |estimate − actual| ÷ max(actual, 1 s) over every job (and per lane),
 * how many jobs with nothing ahead were told 0, and the ratio now/before (none when a side had jobs not done). A job
 * told `null` (no estimate) is counted apart, not in the figures. It asserts nothing.
 *
 *   npx tsx test/bench/queueEstimates.ts [--latency 300] [--bulk 30] [--monitor 20] [--live 12] [--warm 16] [--rounds 1]
 */
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Lane } from '../../contracts/lanes.js';
import type { QueuePosition } from '../../contracts/search.js';
import { composeApplication } from '../../services/compose/application.js';
import { startEmbedded } from '../../services/compose/embedded/embedded.js';
import { loadConfig, tierShare } from '../../services/config/config.js';
import { type FakeGoogle, startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { UNPACED } from '../support/service.js';
import { alternate, type Figure, machineNote, medianOf, quantile, ratio } from './compare.js';
import { createQueuePositionsBefore } from './queuePositionBefore.js';

const { values } = parseArgs({
  options: {
    latency: { type: 'string', default: '300' },
    bulk: { type: 'string', default: '30' },
    monitor: { type: 'string', default: '20' },
    live: { type: 'string', default: '12' },
    warm: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '1' },
    /** every job's figures as JSON lines to this file (for a closer look) */
    dump: { type: 'string' },
  },
});
const latencyMs = Number(values.latency);
const bulk = Number(values.bulk);
const monitorKeywords = Number(values.monitor);
const live = Number(values.live);
const warm = Number(values.warm);
const rounds = Number(values.rounds);

if (fixturesMissing('serp')) {
  console.error('the fixture pages are missing (../shared/fixtures or SERP_FIXTURES_DIR)');
  process.exit(1);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Side = 'now' | 'before';

interface Asked {
  jobId: string;
  key: string;
  lane: Lane;
  /** when the estimate was received (ms, this process's clock: the service's too) */
  at: number;
  queue: QueuePosition | undefined;
}

interface Measured {
  lane: Lane;
  /** when it was asked, ms from the backlog's first submit */
  at: number;
  ahead: number;
  estimate: number | null;
  actual: number;
}

interface Outcome {
  jobs: Measured[];
  /** jobs that did not end done, or whose estimate could not be read */
  failures: number;
  notDone: string;
  seconds: number;
}

const errorOf = (m: Measured) => Math.abs((m.estimate ?? 0) - m.actual) / Math.max(m.actual, 1);

const run = async (google: FakeGoogle, side: Side, round: number): Promise<Outcome> => {
  const dir = await mkdtemp(join(tmpdir(), 'serp-bench-queue-'));
  const config = loadConfig(
    { SERP_GOOGLE_ORIGIN: google.origin, SERP_FETCHER: 'http', SERP_LOG_LEVEL: 'warn', ...UNPACED },
    { port: 0, dataDir: dir, host: '127.0.0.1' },
  );
  const svc = await startEmbedded(config, { logger: false });
  const before =
    side === 'before' ? createQueuePositionsBefore({ ...svc.core, laneMinShare: config.laneMinShare }) : undefined;
  await before?.start();
  const share = tierShare(config.tiers);
  const notDone = new Map<string, number>();
  let failures = 0;
  const fail = (why: string) => {
    failures += 1;
    notDone.set(why, (notDone.get(why) ?? 0) + 1);
  };
  try {
    const app = composeApplication(svc.core, config);
    const mint = async (tier: string) => {
      const k = await app.keys.create({ tier, rateLimitPerMin: 1_000_000, monthlyQuota: 1_000_000 });
      // the api authenticates from the read models: the key is usable once they hold it
      await svc.core.projector.waitFor(k.position ?? (await svc.core.eventStore.headPosition()));
      return { key: k.key, keyId: k.keyId, weight: share(tier) };
    };
    const headers = (key: string) => ({ 'x-api-key': key, 'content-type': 'application/json' });
    const getJson = async (path: string, key: string) => {
      for (;;) {
        const res = await fetch(`${svc.url}${path}`, { headers: { 'x-api-key': key } });
        if (res.status === 429) {
          await res.arrayBuffer();
          await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
          continue;
        }
        return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
      }
    };
    let n = 0;
    /** a submit, and its estimate as this side's estimator gives it the moment the 202 arrives */
    const submit = async (
      k: Awaited<ReturnType<typeof mint>>,
      lane: 'live' | 'bulk',
      depth: number,
    ): Promise<Asked> => {
      const res = await fetch(`${svc.url}/v1/search`, {
        method: 'POST',
        headers: headers(k.key),
        body: JSON.stringify({ keyword: `q ${side} ${round} ${n++}`, depth, no_cache: true, priority: lane }),
      });
      const at = Date.now();
      const body = (await res.json().catch(() => ({}))) as { job_id?: string; queue?: QueuePosition };
      const jobId = String(body.job_id);
      const queue = before ? before.ofNew(lane, k.keyId, k.weight) : body.queue;
      if (res.status !== 202) fail(`submit ${res.status}`);
      return { jobId, key: k.key, lane, at, queue };
    };
    /** a job submitted by the service (a monitor's): its estimate from its first poll that finds it */
    const poll = async (jobId: string, key: string): Promise<Asked | undefined> => {
      for (;;) {
        const res = await fetch(`${svc.url}/v1/search/${jobId}`, { headers: { 'x-api-key': key } });
        const at = Date.now();
        const body = (await res.json().catch(() => ({}))) as { status?: string; queue?: QueuePosition };
        if (res.status === 404 || res.status === 429) {
          await sleep(100);
          continue;
        }
        // ended before it could be asked: no estimate was given to anyone
        if (res.status !== 202) return undefined;
        const queue = before ? before.of(jobId) : body.queue;
        // a 202 without a position: the job ended and its result is not read yet, or its submit is not followed yet
        if (!queue) {
          await sleep(100);
          continue;
        }
        return { jobId, key, lane: 'scheduled', at, queue };
      }
    };
    /** waits until the job ended: when it started, counted from when its estimate was received */
    const actualOf = async (a: Asked): Promise<number | undefined> => {
      for (;;) {
        const { status, body } = await getJson(`/v1/search/${a.jobId}?output=json`, a.key);
        if (status === 202) {
          await sleep(250);
          continue;
        }
        const meta = body.search_metadata as { status?: string; created_at?: string; queued_ms?: number } | undefined;
        if (
          status !== 200 ||
          meta?.status !== 'done' ||
          meta.created_at === undefined ||
          meta.queued_ms === undefined
        ) {
          fail(`${status} ${meta?.status ?? String(body.detail ?? '')}`);
          return undefined;
        }
        return Math.max(0, (Date.parse(meta.created_at) + meta.queued_ms - a.at) / 1000);
      }
    };

    // 1. warm-up: the fleet crawls for a while before the measure
    const w = await mint('enterprise');
    const warmJobs = await Promise.all(Array.from({ length: warm }, () => submit(w, 'bulk', 100)));
    for (const j of warmJobs) await actualOf(j);

    // 2. the mixed backlog
    const [b1, b2, m, l1, l2] = await Promise.all(['enterprise', 'pro', 'enterprise', 'enterprise', 'free'].map(mint));
    const t0 = performance.now();
    const t0ms = Date.now();
    const asked: Array<Promise<Asked | undefined>> = [];
    // the nightly monitor runs, a data team's batches join it, and live users search meanwhile
    const created = await fetch(`${svc.url}/v1/monitors`, {
      method: 'POST',
      headers: headers(m!.key),
      body: JSON.stringify({
        name: 'bench',
        keywords: Array.from({ length: monitorKeywords }, (_, i) => `monitor ${side} ${round} ${i}`),
        domains: ['example.com'],
        schedule: 'daily',
      }),
    });
    const monitorId = String(((await created.json()) as { monitor_id?: string }).monitor_id);
    const runRes = await fetch(`${svc.url}/v1/monitors/${monitorId}/runs`, {
      method: 'POST',
      headers: headers(m!.key),
      body: '{}',
    });
    const runJobs = (((await runRes.json()) as { jobs?: Array<{ job_id: string }> }).jobs ?? []).map((j) => j.job_id);
    if (runRes.status !== 202 || runJobs.length !== monitorKeywords) fail(`monitor run ${runRes.status}`);
    // the run submits its searches itself, at the key's rate: the batches come once they are all in the queue
    const scheduled = await Promise.all(runJobs.map((id) => poll(id, m!.key)));
    for (const a of scheduled) asked.push(Promise.resolve(a));
    for (let i = 0; i < bulk; i++) asked.push(submit(b1!, 'bulk', 100));
    for (let i = 0; i < Math.ceil(bulk / 3); i++) asked.push(submit(b2!, 'bulk', 100));
    const liveLoop = async (k: Awaited<ReturnType<typeof mint>>, depth: number, everyMs: number) => {
      for (let i = 0; i < live; i++) {
        asked.push(submit(k, 'live', depth));
        await sleep(everyMs);
      }
    };
    await Promise.all([liveLoop(l1!, 10, 400), liveLoop(l2!, 100, 1000)]);
    const all = (await Promise.all(asked)).filter((a): a is Asked => a !== undefined);
    const jobs: Measured[] = [];
    for (const a of all) {
      const actual = await actualOf(a);
      if (actual === undefined) continue;
      if (!a.queue) {
        fail('a queued job without a queue position');
        continue;
      }
      jobs.push({ lane: a.lane, ahead: a.queue.ahead, estimate: a.queue.estimated_start_s, actual, at: a.at - t0ms });
    }
    return {
      jobs,
      failures,
      notDone: [...notDone].map(([why, c]) => `${c}× ${why}`).join('; '),
      seconds: (performance.now() - t0) / 1000,
    };
  } finally {
    await before?.stop();
    await svc.close();
    await rm(dir, { recursive: true, force: true });
  }
};

interface Summary {
  jobs: number;
  told: number;
  nulls: number;
  median: number;
  p90: number;
}
const summarise = (jobs: Measured[]): Summary => {
  const told = jobs.filter((j) => j.estimate !== null);
  const errors = told.map(errorOf);
  return {
    jobs: jobs.length,
    told: told.length,
    nulls: jobs.length - told.length,
    median: quantile(errors, 0.5),
    p90: quantile(errors, 0.9),
  };
};
const line = (s: Summary) =>
  `${s.told} jobs: median ${s.median.toFixed(2)}, p90 ${s.p90.toFixed(2)}${s.nulls ? ` (${s.nulls} told null)` : ''}`;

const google = await startFakeGoogle({ latencyMs });
console.log(
  `queue estimates: warm-up ${warm} top-100, then ${bulk} + ${Math.ceil(bulk / 3)} bulk top-100 of two keys, a monitor of ${monitorKeywords} keywords, ${live} one-page and ${live} top-100 live searches of two keys; fake Google at ${latencyMs} ms a page, unpaced; ${machineNote()}`,
);
const results = await alternate(
  rounds,
  {
    now: (round: number) => run(google, 'now', round),
    before: (round: number) => run(google, 'before', round),
  },
  (round, r) => {
    for (const [side, o] of Object.entries(r)) {
      const by = (lane: Lane) => line(summarise(o.jobs.filter((j) => j.lane === lane)));
      console.log(
        `round ${round} ${side.padEnd(6)}: ${line(summarise(o.jobs))} | live ${by('live')} | scheduled ${by('scheduled')} | bulk ${by('bulk')}; ${o.seconds.toFixed(1)} s; not done ${o.failures}${o.notDone ? ` (${o.notDone})` : ''}`,
      );
      const nothingAhead = o.jobs.filter((j) => j.ahead === 0);
      const toldZero = nothingAhead.filter((j) => j.estimate === 0);
      const worst = [...o.jobs].sort((a, b) => errorOf(b) - errorOf(a)).slice(0, 3);
      console.log(
        `  nothing ahead: ${nothingAhead.length} jobs, ${toldZero.length} told 0 (their actual start: median ${quantile(
          nothingAhead.map((j) => j.actual),
          0.5,
        ).toFixed(1)} s, p90 ${quantile(
          nothingAhead.map((j) => j.actual),
          0.9,
        ).toFixed(1)} s); worst: ${worst
          .map((j) => `${j.lane} ahead ${j.ahead} told ${j.estimate} s, started ${j.actual.toFixed(1)} s`)
          .join('; ')}`,
      );
    }
  },
);
await google.close();
if (values.dump) {
  const lines = Object.entries(results).flatMap(([side, os]) =>
    os.flatMap((o, round) => o.jobs.map((j) => JSON.stringify({ side, round, ...j }))),
  );
  writeFileSync(values.dump, `${lines.join('\n')}\n`);
}

const fig = (side: Outcome[], pick: (s: Summary) => number): Figure =>
  medianOf(side.map((o) => ({ value: pick(summarise(o.jobs)), failures: o.failures })));
for (const [label, pick] of [
  ['median |estimate − actual| ÷ max(actual, 1 s)', (s: Summary) => s.median],
  ['p90 |estimate − actual| ÷ max(actual, 1 s)', (s: Summary) => s.p90],
] as const) {
  const a = fig(results.now, pick);
  const b = fig(results.before, pick);
  console.log(
    `${label}: now ${a.value.toFixed(2)}, before ${b.value.toFixed(2)} (now/before ${ratio(a, b, ['now', 'before'])})`,
  );
}
