/**
 * Webhook latency through the real service (docs/webhooks.md#latency): `serp-api serve` (the build, embedded, on a
 * listening port) crawling the fake Google origin (a process of its own), and a receiver on 127.0.0.1 in this
 * process that verifies every delivery with `standardwebhooks`, as a user's would. Three measures, each on a fresh
 * service and data directory:
 *
 * - `first`: searches submitted at `--rate` a minute (default 1,000) for `--seconds` (60), each a crawl
 *   (`no_cache`, `depth: 10`: one Google page) whose `search.completed` goes to one endpoint. Per message, the time
 *   from its `CrawlCompleted` (the body's `timestamp` is that event's recorded time) to the receiver's first arrival
 *   of its `webhook-id`: p50, p99, max, and the completions a minute actually reached.
 * - `outage`: the receiver refuses connections (it stops listening) for `--down` seconds (600) while `--outage-searches`
 *   searches (60) spread over that time complete, then listens again. Scheduled (the endpoint's deliveries, from
 *   `GET /v1/webhooks/{id}/deliveries`) against delivered and lost, duplicate arrivals, and per delivery the time
 *   from the receiver's return to its arrival against the backoff step in force (the delay between the attempt that
 *   arrived and the refused one before it). `--backoff-ms` sets SERP_WEBHOOK_BACKOFF_MS (default: the service's 5 s).
 * - `reads`: `/v1` read p50/p99 of a finished result, read by an open-loop probe (readProbe.ts, 200 reads a second in
 *   a process of its own) on the idle service, and while cached searches are submitted at `--deliveries-per-s` ÷ 10
 *   a second (default 20) to a key with 10 endpoints that each take `search.completed`: `--deliveries-per-s`
 *   deliveries a second (200). A third side submits the same searches with the endpoints disabled (no deliveries),
 *   so the deliveries' own cost shows apart from the submits'. Sides alternate round by round (`--rounds`, 2;
 *   `--phase-seconds`, 15); no ratio where a side had failed reads, failed submits or undelivered messages.
 *
 * `npx tsx test/bench/webhookLatency.ts [--only first,outage,reads] [--down 600] … [--no-build]`. Prints figures
 * only; never asserts a time. SERP_TEST_NODE_ARGS gives the service node flags (`--cpu-prof --cpu-prof-dir=DIR`).
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadTestSettings } from '../../services/config/tests.js';
import { startBuiltService } from '../support/builtService.js';
import { startFakeGoogleProcess } from '../support/fakeGoogleProcess.js';
import { fixturesMissing } from '../support/fixtures.js';
import { removeDir, submit, tempDataDir } from '../support/service.js';
import { type Receiver, startReceiver } from '../support/webhookReceiver.js';
import { alternate, type Figure, jobOutcome, machineNote, printRatio, quantile } from './compare.js';
import { PROBE_RATE, runReadProbe } from './probeRun.js';

const { values } = parseArgs({
  options: {
    only: { type: 'string', default: 'first,outage,reads' },
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '60' },
    down: { type: 'string', default: '600' },
    'outage-searches': { type: 'string', default: '60' },
    'backoff-ms': { type: 'string' },
    'deliveries-per-s': { type: 'string', default: '200' },
    'phase-seconds': { type: 'string', default: '15' },
    rounds: { type: 'string', default: '2' },
    'no-build': { type: 'boolean', default: false },
  },
});
const missing = fixturesMissing();
if (missing) {
  console.log(`skipped: ${missing}`);
  process.exit(0);
}
const ADMIN = 'webhook-latency-bench-admin-token';
const root = fileURLToPath(new URL('../..', import.meta.url));
if (!values['no-build']) execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
/** node flags for the service (`SERP_TEST_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR"`) */
const nodeArgs = (loadTestSettings().testNodeArgs ?? '').split(' ').filter(Boolean);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (x: number) => `${Math.round(x)} ms`;

/** A fresh service on a fresh data directory, the fake Google in a process of its own, a key and the receiver. */
const withService = async <T>(env: Record<string, string>, body: (s: Setup) => Promise<T>): Promise<T> => {
  const google = await startFakeGoogleProcess(20);
  const data = tempDataDir('webhook-latency');
  const receiver = await startReceiver();
  const svc = await startBuiltService(
    root,
    data,
    {
      SERP_GOOGLE_ORIGIN: google.origin,
      SERP_ADMIN_TOKEN: ADMIN,
      SERP_WEBHOOK_ALLOW_HTTP: '1',
      SERP_WEBHOOK_ALLOW_PRIVATE: '1',
      ...(values['backoff-ms'] ? { SERP_WEBHOOK_BACKOFF_MS: values['backoff-ms'] } : {}),
      ...env,
    },
    nodeArgs,
  );
  try {
    const res = await fetch(`${svc.url}/admin/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'pro', monthly_quota: 0, rate_limit_per_min: 100_000 }),
    });
    const { key } = (await res.json()) as { key: string };
    const call = async (method: string, path: string, json?: unknown) => {
      const r = await fetch(`${svc.url}/v1${path}`, {
        method,
        headers: { 'x-api-key': key, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
        body: json === undefined ? undefined : JSON.stringify(json),
      });
      if (r.status >= 300) throw new Error(`${method} ${path}: HTTP ${r.status} ${await r.text()}`);
      return r.status === 204 ? undefined : ((await r.json()) as Record<string, unknown>);
    };
    const register = async (path: string) => {
      const hook = await call('POST', '/webhooks', {
        url: `${receiver.origin}${path}`,
        events: ['search.completed', 'search.failed'],
      });
      receiver.setSecrets(path, [hook!.secret as string]);
      return hook!.webhook_id as string;
    };
    return await body({ url: svc.url, key, receiver, call, register });
  } finally {
    // a drain, not kill -9: a --cpu-prof profile is written on the way out
    const exited = once(svc.child, 'exit');
    svc.child.kill('SIGTERM');
    await Promise.race([exited, sleep(10_000)]);
    await svc.kill();
    await receiver.close();
    await google.close();
    removeDir(data);
  }
};
interface Setup {
  url: string;
  key: string;
  receiver: Receiver;
  call(method: string, path: string, json?: unknown): Promise<Record<string, unknown> | undefined>;
  register(path: string): Promise<string>;
}

/** Submits `count` searches at `perSecond`, open loop (each on schedule whatever the others do); the failures. */
const paced = async (s: Setup, count: number, perSecond: number, body: (i: number) => Record<string, unknown>) => {
  let failures = 0;
  const sent: Array<Promise<void>> = [];
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    await sleep(Math.max(0, t0 + (i * 1000) / perSecond - performance.now()));
    sent.push(
      submit(s.url, s.key, body(i)).then(
        async (r) => {
          await r.arrayBuffer();
          if (r.status !== 202 && r.status !== 200) failures++;
        },
        () => {
          failures++;
        },
      ),
    );
  }
  await Promise.all(sent);
  return failures;
};

/** Each `webhook-id`'s first arrival on `path` (verified), and how many arrivals repeated one. */
const arrivals = (r: Receiver, path: string) => {
  const first = new Map<string, Receiver['received'][number]>();
  let duplicates = 0;
  let unverified = 0;
  for (const x of r.received) {
    if (x.path !== path) continue;
    if (!x.payload) unverified++;
    const id = String(x.headers['webhook-id']);
    if (first.has(id)) duplicates++;
    else first.set(id, x);
  }
  return { first, duplicates, unverified };
};

const waitUntil = async (pred: () => boolean, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs;
  while (!pred() && Date.now() < deadline) await sleep(100);
  return pred();
};

/** (a) CrawlCompleted → the receiver's first arrival, at `--rate` searches a minute. */
const first = () =>
  withService({}, async (s) => {
    const rate = Number(values.rate);
    const count = Math.round((rate * Number(values.seconds)) / 60);
    const hookId = await s.register('/first');
    const warm = (await (await submit(s.url, s.key, { keyword: 'coffee', depth: 10 })).json()) as { job_id: string };
    await jobOutcome(s.url, s.key, warm.job_id, 60_000);
    await waitUntil(() => arrivals(s.receiver, '/first').first.size >= 1, 30_000);
    const before = arrivals(s.receiver, '/first').first.size;
    console.log(`first: ${count} searches at ${rate} a minute (${machineNote()})`);
    const failedSubmits = await paced(s, count, rate / 60, (i) => ({
      keyword: `webhook latency ${i}`,
      no_cache: true,
      depth: 10,
    }));
    await waitUntil(() => arrivals(s.receiver, '/first').first.size >= before + count, 120_000);
    const { first: got, duplicates, unverified } = arrivals(s.receiver, '/first');
    const done = [...got.values()].slice(before).filter((x) => x.payload?.type === 'search.completed');
    const failed = got.size - before - done.length;
    const lat = done.map((x) => x.at - Date.parse(x.payload!.timestamp));
    const times = done.map((x) => Date.parse(x.payload!.timestamp)).sort((a, b) => a - b);
    const span = ((times.at(-1) ?? 0) - (times[0] ?? 0)) / 60_000;
    console.log(
      `first: ${done.length} search.completed, ${failed} search.failed, ${count - done.length - failed} missing, ${failedSubmits} failed submits, ${duplicates} duplicates, ${unverified} unverified; ${(done.length / Math.max(span, 1 / 60)).toFixed(0)} completions a minute reached`,
    );
    console.log(
      `first: CrawlCompleted → first arrival p50 ${ms(quantile(lat, 0.5))}, p99 ${ms(quantile(lat, 0.99))}, max ${ms(Math.max(...lat))} (goal: p99 ≤ 1,000 ms)`,
    );
    const list = await deliveriesOf(s, hookId);
    const scheduledAt = new Map(list.map((d) => [d.message_id, Date.parse(d.scheduled_at)]));
    const routed: number[] = [];
    const sent: number[] = [];
    for (const x of done) {
      const at = scheduledAt.get(String(x.headers['webhook-id']));
      if (at === undefined) continue;
      routed.push(at - Date.parse(x.payload!.timestamp));
      sent.push(x.at - at);
    }
    console.log(
      `first: of which CrawlCompleted → scheduled p50 ${ms(quantile(routed, 0.5))}, p99 ${ms(quantile(routed, 0.99))}; scheduled → arrival p50 ${ms(quantile(sent, 0.5))}, p99 ${ms(quantile(sent, 0.99))}; ${retried(list)}`,
    );
  });

interface Attempt {
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
}
interface Delivery {
  message_id: string;
  scheduled_at: string;
  status: string;
  attempts: Attempt[];
}

/** The endpoint's newest 1,000 deliveries (`GET /v1/webhooks/{id}/deliveries`): every one this bench makes. */
const deliveriesOf = async (s: Setup, hookId: string) =>
  (await s.call('GET', `/webhooks/${hookId}/deliveries?limit=1000`))!.deliveries as Delivery[];

/** How many deliveries needed more than one attempt, and why their first failed. */
const retried = (list: Delivery[]) => {
  const reasons = new Map<string, number>();
  let n = 0;
  for (const d of list) {
    if (d.attempts.length < 2) continue;
    n++;
    const why = d.attempts[0]!.error ?? String(d.attempts[0]!.status_code);
    reasons.set(why, (reasons.get(why) ?? 0) + 1);
  }
  return `${n} deliveries needed a retry${n ? ` (first attempt: ${[...reasons].map(([k, v]) => `${k} ×${v}`).join(', ')})` : ''}`;
};

/** (b) the receiver refuses connections for `--down` seconds, then listens again. */
const outage = () =>
  withService({}, async (s) => {
    const downMs = Number(values.down) * 1000;
    const searches = Number(values['outage-searches']);
    const hookId = await s.register('/down');
    await s.receiver.down();
    const t0 = Date.now();
    console.log(
      `outage: receiver refusing connections for ${downMs / 1000} s, ${searches} searches spread over it (backoff ${values['backoff-ms'] ?? '5000 (default)'} ms; ${machineNote()})`,
    );
    const failedSubmits = await paced(s, searches, searches / (downMs / 1000), (i) => ({
      keyword: `webhook outage ${i}`,
      no_cache: true,
      depth: 10,
    }));
    await sleep(Math.max(0, t0 + downMs - Date.now()));
    await s.receiver.up();
    const back = Date.now();
    // the step in force is at most the time a delivery has waited, plus jitter: 1.5× the outage is ample
    await waitUntil(() => arrivals(s.receiver, '/down').first.size >= searches, 1.5 * downMs + 60_000);
    const list = await deliveriesOf(s, hookId);
    const { first: got, duplicates, unverified } = arrivals(s.receiver, '/down');
    const lost = list.filter((d) => !got.has(d.message_id)).length;
    let within = 0;
    let worst = { sinceReturn: 0, step: 0 };
    for (const d of list) {
      const arrived = got.get(d.message_id);
      const ok = d.attempts.findIndex((a) => a.status_code !== null && a.status_code < 300);
      if (!arrived || ok < 1) continue;
      const step = Date.parse(d.attempts[ok]!.at) - Date.parse(d.attempts[ok - 1]!.at);
      const sinceReturn = arrived.at - back;
      if (sinceReturn <= step) within++;
      if (sinceReturn > worst.sinceReturn) worst = { sinceReturn, step };
    }
    const attempts = list.reduce((n, d) => n + d.attempts.length, 0);
    console.log(
      `outage: ${list.length} scheduled (${searches} searches, ${failedSubmits} failed submits), ${got.size} delivered, ${lost} lost, ${duplicates} duplicates, ${unverified} unverified, ${attempts} attempts`,
    );
    console.log(
      `outage: last arrival ${(worst.sinceReturn / 1000).toFixed(1)} s after the return, its step in force ${(worst.step / 1000).toFixed(1)} s; ${within}/${list.length} arrived within their step of the return`,
    );
  });

/** the probe's reads while `phase` runs (probeRun.ts): each read's ms, and the probe's and the phase's failures */
const probe = async (url: string, key: string, phase: () => Promise<number>) => {
  const { report, phaseResult } = await runReadProbe(url, key, phase);
  return { times: report.times, failures: report.failures + phaseResult };
};

/** (c) /v1 read p99 idle, under submits alone, and under the same submits making `--deliveries-per-s` deliveries */
const reads = async () => {
  const perSecond = Number(values['deliveries-per-s']);
  const seconds = Number(values['phase-seconds']);
  const ENDPOINTS = 10;
  const submitsPerSecond = perSecond / ENDPOINTS;
  console.log(
    `reads: /v1 read of a finished result at ${PROBE_RATE}/s, ${seconds} s a side: idle, ${submitsPerSecond} cached searches/s with ${ENDPOINTS} endpoints disabled, and the same making ${perSecond} deliveries/s (${machineNote()})`,
  );
  type Side = { times: number[]; failures: number; rate?: number };
  const sides = await alternate(Number(values.rounds), {
    idle: () => withService({}, (s) => readPhases(s, 'idle', seconds, submitsPerSecond, ENDPOINTS)),
    submits: () => withService({}, (s) => readPhases(s, 'submits', seconds, submitsPerSecond, ENDPOINTS)),
    deliveries: () => withService({}, (s) => readPhases(s, 'deliveries', seconds, submitsPerSecond, ENDPOINTS)),
  });
  const all = (xs: Side[]) => ({ times: xs.flatMap((x) => x.times), failures: xs.reduce((n, x) => n + x.failures, 0) });
  const figure = (xs: Side[]): Figure => ({ value: quantile(all(xs).times, 0.99), failures: all(xs).failures });
  for (const [name, xs] of Object.entries(sides) as Array<[string, Side[]]>) {
    const a = all(xs);
    const rates = xs.map((x) => x.rate).filter((x) => x !== undefined);
    console.log(
      `reads ${name.padEnd(10)}: p50 ${quantile(a.times, 0.5).toFixed(1)} ms, p99 ${quantile(a.times, 0.99).toFixed(1)} ms (${a.times.length} reads, ${a.failures} failures)${rates.length ? `, ${rates.map((r) => r.toFixed(0)).join(' / ')} deliveries/s` : ''}`,
    );
  }
  printRatio('reads: p99 under deliveries ÷ idle (goal ≤ 2×)', figure(sides.deliveries), figure(sides.idle), [
    'deliveries',
    'idle',
  ]);
  printRatio('reads: p99 under deliveries ÷ submits alone', figure(sides.deliveries), figure(sides.submits), [
    'deliveries',
    'submits',
  ]);
};

/** One side of (c) on its own service: the endpoints, a finished result to read, the phase, the probe. */
const readPhases = async (
  s: Setup,
  side: 'idle' | 'submits' | 'deliveries',
  seconds: number,
  submitsPerSecond: number,
  endpoints: number,
) => {
  const ids = [];
  for (let i = 0; i < endpoints; i++) ids.push(await s.register(`/r${i}`));
  if (side === 'submits') for (const id of ids) await s.call('PATCH', `/webhooks/${id}`, { disabled: true });
  const warm = (await (await submit(s.url, s.key, { keyword: 'coffee' })).json()) as { job_id: string };
  const ready = await jobOutcome(s.url, s.key, warm.job_id, 60_000);
  if (!ready.done) throw new Error(`the search the probe reads ended ${ready.status}`);
  const paths = ids.map((_, i) => `/r${i}`);
  const count = () => paths.reduce((n, p) => n + arrivals(s.receiver, p).first.size, 0);
  const expected = side === 'deliveries' ? endpoints : 0;
  await waitUntil(() => count() >= expected, 30_000);
  const target = `${s.url}/v1/search/${warm.job_id}?output=json`;
  await probe(target, s.key, () => sleep(1_000).then(() => 0)); // warm-up
  let rate: number | undefined;
  let sent = 0;
  let before = 0;
  const result = await probe(target, s.key, async () => {
    if (side === 'idle') return sleep(seconds * 1000).then(() => 0);
    before = count();
    const t0 = Date.now();
    sent = Math.round(seconds * submitsPerSecond);
    const failed = await paced(s, sent, submitsPerSecond, () => ({ keyword: 'coffee' }));
    if (side === 'deliveries') rate = ((count() - before) / (Date.now() - t0)) * 1000;
    return failed;
  });
  if (side === 'deliveries') {
    // a message not delivered within 10 s of the phase's end fails the side: its load was not all sent
    await waitUntil(() => count() >= before + sent * endpoints, 10_000);
    result.failures += Math.max(0, before + sent * endpoints - count());
  }
  return { ...result, rate };
};

const only = values.only.split(',').map((x) => x.trim());
if (only.includes('first')) await first();
if (only.includes('reads')) await reads();
if (only.includes('outage')) await outage();
