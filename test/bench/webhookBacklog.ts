/**
 * One key's webhook backlog against everyone else's work (docs/benchmarks.md#webhook-backlog): does a backlog
 * draining to a receiver that came back, with ten replays of 1,000 messages on top, slow another key's search or
 * delay its webhook? The real embedded service (`serp-api serve` from the sources, on a listening port), the fake
 * Google origin in a process of its own, receiver A (the backlog's) in a process of its own, receiver B (the one timed) on
 * 127.0.0.1 in this process.
 *
 *   npx tsx test/bench/webhookBacklog.ts [--rounds 2] [--searches 1000] [--endpoints 6] [--replays 10]
 *     [--probes 8] [--gap-ms 1500] [--backoff-ms 1000]
 *
 * Key A (enterprise) has `--endpoints` endpoints on receiver A, which refuses connections while A makes `--searches`
 * cached searches: 6,000 deliveries build up, retried with `--backoff-ms` doubling. Key C (enterprise, as in the
 * finding) makes as many cached searches, then gets `--replays` endpoints on receiver A (a key may have 10). Then
 * receiver A listens again and C asks its replays at once, one an endpoint, each queueing 1,000 messages (16,000
 * deliveries in all with A's). Key B (pro) has one endpoint on receiver B.
 *
 * Measured on B, `--probes` one-page searches (`no_cache`, one Google page) one at a time, `--gap-ms` apart:
 * submit → `done` (polled every 20 ms), `CrawlCompleted` → its webhook's arrival, and a `GET /metrics` beside each.
 * Two sides a round, on one fresh service and data directory: idle (nothing else running) and loaded (from A's
 * receiver's return and replays on); their order alternates by round (idle before A's backlog was built, or after
 * it drained). A failure is a B search not done, a B webhook not arrived within 30 s, or A's backlog not drained
 * within 10 minutes; no ratio when a side had one. Prints figures; asserts nothing.
 */
import { parseArgs } from 'node:util';
import { startFakeGoogleProcess } from '../support/fakeGoogleProcess.js';
import { fixturesMissing } from '../support/fixtures.js';
import { type ReceiverProcess, startReceiverProcess } from '../support/receiverProcess.js';
import { removeDir, startService, submit, tempDataDir } from '../support/service.js';
import { type Receiver, startReceiver } from '../support/webhookReceiver.js';
import { alternate, type Figure, jobOutcome, machineNote, printRatio, quantile } from './compare.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    searches: { type: 'string', default: '1000' },
    endpoints: { type: 'string', default: '6' },
    replays: { type: 'string', default: '10' },
    probes: { type: 'string', default: '8' },
    'gap-ms': { type: 'string', default: '1500' },
    'backoff-ms': { type: 'string', default: '1000' },
  },
});
const missing = fixturesMissing();
if (missing) {
  console.log(`skipped: ${missing}`);
  process.exit(0);
}
const ROUNDS = Number(values.rounds);
const SEARCHES = Number(values.searches);
const ENDPOINTS = Number(values.endpoints);
const REPLAYS = Number(values.replays);
const PROBES = Number(values.probes);
const GAP_MS = Number(values['gap-ms']);
const ADMIN = 'webhook-backlog-bench-admin-token';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (x: number) => `${Math.round(x)} ms`;

interface Api {
  url: string;
  key: string;
  call(method: string, path: string, json?: unknown): Promise<Record<string, unknown>>;
}

const keyOf = async (url: string, tier: string): Promise<Api> => {
  const res = await fetch(`${url}/admin/api/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tier, monthly_quota: 0, rate_limit_per_min: 100_000 }),
  });
  const { key } = (await res.json()) as { key: string };
  const call = async (method: string, path: string, json?: unknown) => {
    const r = await fetch(`${url}/v1${path}`, {
      method,
      headers: { 'x-api-key': key, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    if (r.status >= 300) throw new Error(`${method} ${path}: HTTP ${r.status} ${await r.text()}`);
    return (await r.json()) as Record<string, unknown>;
  };
  return { url, key, call };
};

const register = async (api: Api, receiver: Receiver | ReceiverProcess, path: string) => {
  const hook = await api.call('POST', '/webhooks', { url: `${receiver.origin}${path}`, events: ['search.completed'] });
  await receiver.setSecrets(path, [hook.secret as string]);
  return hook.webhook_id as string;
};

/** submit → done, polled every 20 ms (a figure of ms, or a failure) */
const searchOnce = async (api: Api, keyword: string): Promise<{ ms: number; done: boolean; jobId: string }> => {
  const t0 = performance.now();
  const res = await submit(api.url, api.key, { keyword, no_cache: true, depth: 10 });
  const { job_id: jobId } = (await res.json()) as { job_id: string };
  const deadline = Date.now() + 60_000;
  for (;;) {
    const r = await fetch(`${api.url}/v1/search/${jobId}?output=json`, { headers: { 'x-api-key': api.key } });
    if (r.status === 202 && Date.now() < deadline) {
      await r.arrayBuffer();
      await sleep(20);
      continue;
    }
    const body = (await r.json().catch(() => ({}))) as { search_metadata?: { status?: string } };
    return { ms: performance.now() - t0, done: body.search_metadata?.status === 'done', jobId };
  }
};

const metricsMs = async (url: string) => {
  const t0 = performance.now();
  const r = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } });
  await r.arrayBuffer();
  return r.ok ? performance.now() - t0 : undefined;
};

interface Side {
  /** each probe: when it began (ms after the side's start), its search and its webhook */
  probes: string[];
  search: number[];
  webhook: number[];
  metrics: number[];
  failures: number;
  note: string;
}

/** B's probes: one search at a time, `GAP_MS` apart; its webhook's arrival measured from the body's timestamp */
const probeB = async (b: Api, rb: Receiver, tag: string): Promise<Side> => {
  const side: Side = { probes: [], search: [], webhook: [], metrics: [], failures: 0, note: '' };
  const t0 = Date.now();
  for (let i = 0; i < PROBES; i++) {
    const next = Date.now() + GAP_MS;
    const began = Date.now() - t0;
    const s = await searchOnce(b, `backlog probe ${tag} ${i}`);
    const m = await metricsMs(b.url);
    if (m === undefined) side.failures++;
    else side.metrics.push(m);
    if (!s.done) {
      side.failures++;
      continue;
    }
    side.search.push(s.ms);
    const deadline = Date.now() + 30_000;
    let arrived: Receiver['received'][number] | undefined;
    while (!arrived && Date.now() < deadline) {
      arrived = rb.received.find((x) => x.payload?.data.job_id === s.jobId);
      if (!arrived) await sleep(10);
    }
    if (!arrived) side.failures++;
    else side.webhook.push(arrived.at - Date.parse(arrived.payload!.timestamp));
    side.probes.push(
      `+${(began / 1000).toFixed(1)} s: ${ms(s.ms)}, webhook ${arrived ? ms(side.webhook.at(-1)!) : 'missing'}`,
    );
    await sleep(Math.max(0, next - Date.now()));
  }
  return side;
};

const describe = (s: Side) =>
  `B search p50 ${ms(quantile(s.search, 0.5))}, max ${ms(Math.max(0, ...s.search))}; B webhook p50 ${ms(quantile(s.webhook, 0.5))}, max ${ms(Math.max(0, ...s.webhook))}; /metrics p50 ${ms(quantile(s.metrics, 0.5))}, max ${ms(Math.max(0, ...s.metrics))}; ${s.failures} failures${s.note ? `; ${s.note}` : ''}`;

const round = async (n: number) => {
  const google = await startFakeGoogleProcess(20);
  const data = tempDataDir('webhook-backlog');
  // A's 16,000 deliveries are verified in a process of their own: in this one, their work delayed B's polls and the
  // arrival of B's webhook, which this bench times
  const ra = await startReceiverProcess();
  const rb = await startReceiver();
  const svc = await startService(data, {
    SERP_GOOGLE_ORIGIN: google.origin,
    SERP_ADMIN_TOKEN: ADMIN,
    SERP_WEBHOOK_ALLOW_HTTP: '1',
    SERP_WEBHOOK_ALLOW_PRIVATE: '1',
    SERP_WEBHOOK_BACKOFF_MS: values['backoff-ms'],
  });
  try {
    const a = await keyOf(svc.url, 'enterprise');
    const b = await keyOf(svc.url, 'pro');
    const c = await keyOf(svc.url, 'enterprise');
    for (let i = 0; i < ENDPOINTS; i++) await register(a, ra, `/down/${i}`);
    await register(b, rb, '/b');
    // warm both keys' paths (a first crawl, its webhook) before anything is timed
    // A's one crawl: every search of A after it is answered from the cache (a new job, a message, no crawl)
    const crawled = (await (await submit(a.url, a.key, { keyword: 'webhook backlog', depth: 10 })).json()) as {
      job_id: string;
    };
    await jobOutcome(a.url, a.key, crawled.job_id, 60_000);
    await searchOnce(b, 'backlog probe warm');
    for (const deadline = Date.now() + 60_000; (await ra.count('/down/')) < ENDPOINTS; await sleep(50))
      if (Date.now() > deadline) throw new Error("A's warm-up webhooks did not arrive within 60 s");

    /** A's backlog: receiver A down, A's cached searches, each a message to each of its endpoints */
    const build = async () => {
      await ra.down();
      const since = new Date().toISOString();
      const t0 = Date.now();
      const sent: Array<Promise<unknown>> = [];
      /** each key's searches answered (each a message), and the statuses of those refused */
      const answered = new Map<Api, number>([
        [a, 0],
        [c, 0],
      ]);
      const refused: number[] = [];
      for (let i = 0; i < 2 * SEARCHES; i++) {
        const by = i % 2 === 0 ? a : c;
        sent.push(
          submit(by.url, by.key, { keyword: 'webhook backlog', depth: 10 }).then(async (r) => {
            if (r.status >= 300) refused.push(r.status);
            else answered.set(by, answered.get(by)! + 1);
            await r.arrayBuffer();
          }),
        );
        if (i % 50 === 49) await Promise.all(sent.splice(0));
      }
      await Promise.all(sent);
      if (refused.length > 0) console.log(`  A, C: searches refused with ${refused.join(', ')}`);
      const fromA = answered.get(a)! * ENDPOINTS;
      // the deliveries are all scheduled once every endpoint lists them
      const deadline = Date.now() + 300_000;
      for (;;) {
        const service = (await (
          await fetch(`${a.url}/admin/api/service`, { headers: { authorization: `Bearer ${ADMIN}` } })
        ).json()) as { webhook_outbox?: { pending: number } };
        if ((service.webhook_outbox?.pending ?? 0) >= fromA || Date.now() > deadline) break;
        await sleep(500);
      }
      console.log(`  A: ${fromA} deliveries waiting after ${((Date.now() - t0) / 1000).toFixed(0)} s`);
      const replayOn: string[] = [];
      for (let i = 0; i < REPLAYS; i++) replayOn.push(await register(c, ra, `/replay/${i}`));
      const expected = fromA + REPLAYS * Math.min(answered.get(c)!, 1_000);
      return { since, replayOn, expected, buildS: (Date.now() - t0) / 1000 };
    };

    const sides = {
      idle: async () => probeB(b, rb, `idle ${n}`),
      loaded: async () => {
        const { since, replayOn, expected, buildS } = await build();
        const before = await ra.distinct('/');
        await ra.up();
        const back = Date.now();
        const replays = await Promise.all(
          replayOn.map((id) =>
            c.call('POST', `/webhooks/${id}/replay`, { since }).then(
              () => 1,
              () => 0,
            ),
          ),
        );
        const side = await probeB(b, rb, `loaded ${n}`);
        const deadline = back + 600_000;
        while ((await ra.distinct('/')) - before < expected && Date.now() < deadline) await sleep(200);
        const drained = (await ra.distinct('/')) - before;
        const drainS = (Date.now() - back) / 1000;
        if (drained < expected) side.failures++;
        side.note = `A and C: backlog built in ${buildS.toFixed(0)} s, ${replays.reduce((x, y) => x + y, 0)}/${REPLAYS} replays accepted, ${drained}/${expected} arrived ${drainS.toFixed(1)} s after the return (${(drained / drainS).toFixed(0)}/s)`;
        return side;
      },
    };
    return await alternate(
      1,
      sides,
      (r, res) => {
        console.log(`round ${r + 1} idle: ${describe(res.idle)}`);
        console.log(`  probes: ${res.idle.probes.join('; ')}`);
        console.log(`round ${r + 1} loaded: ${describe(res.loaded)}`);
        console.log(`  probes: ${res.loaded.probes.join('; ')}`);
      },
      n,
    );
  } finally {
    await svc.stop();
    await ra.close();
    await rb.close();
    await google.close();
    removeDir(data);
  }
};

console.log(
  `# webhook backlog: key A's ${SEARCHES} cached searches × ${ENDPOINTS} endpoints behind a refusing receiver, then it comes back and key C asks ${REPLAYS} replays of ${SEARCHES}; key B's ${PROBES} one-page searches ${GAP_MS} ms apart, idle against loaded; ${ROUNDS} rounds, order alternated; ${machineNote()}`,
);
const all: { idle: Side[]; loaded: Side[] } = { idle: [], loaded: [] };
for (let n = 0; n < ROUNDS; n++) {
  const r = await round(n);
  all.idle.push(...r.idle);
  all.loaded.push(...r.loaded);
}
const fig = (sides: Side[], pick: (s: Side) => number[], q: number): Figure => ({
  value: quantile(sides.flatMap(pick), q),
  failures: sides.reduce((n, s) => n + s.failures, 0),
});
for (const [what, pick] of [
  ['B search submit → done', (s: Side) => s.search],
  ['B webhook CrawlCompleted → arrival', (s: Side) => s.webhook],
  ['GET /metrics', (s: Side) => s.metrics],
] as const) {
  for (const [label, q] of [
    ['p50', 0.5],
    ['max', 1],
  ] as const) {
    const idle = fig(all.idle, pick, q);
    const loaded = fig(all.loaded, pick, q);
    console.log(`${what} ${label}: idle ${ms(idle.value)}, loaded ${ms(loaded.value)}`);
    printRatio(`${what} ${label}, loaded / idle`, loaded, idle, ['loaded', 'idle']);
  }
}
