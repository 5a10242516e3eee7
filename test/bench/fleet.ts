/**
 * The fleet against the adversary (docs/fleet.md, docs/going-live.md): `P` proxies, each allowed `L` requests a
 * window before a ban (a window long, doubling while the address keeps asking), `N` one-page searches submitted at
 * once to `serp-api serve`, with per-route pacing on (SERP_ROUTE_MAX_RPM = L a window) and off (today's crawler:
 * unpaced, cooldowns from 2 s), in the same run, sides alternated per round. The fake Google (with its proxies) runs
 * in a process of its own; each side gets a fresh one and a fresh service.
 *
 *   node --import tsx test/bench/fleet.ts                 # the full figures: 4 proxies, 20 a minute, 300 searches
 *   node --import tsx test/bench/fleet.ts --scale 0.25    # the same ratios in a quarter of the time (15 s windows)
 *   node --import tsx test/bench/fleet.ts --paced-only    # the paced side alone: its figures against the pool
 *
 * Per side: searches done / failed / unfinished, throughput against what the pool allows (P × L a window), the share
 * of requests that reached an address banned at that moment, and Google requests per successful search (all
 * requests the origin saw: result pages, challenge pages and reloads, session openings, /sorry/). Throughput is
 * searches done from the first submit to the last search done, start-up included; the start-up (first submit to the
 * origin's first request: the service taking jobs, Chromium starting) is shown apart, and so is the pace the origin
 * saw while the routes were in use (its requests from its first to its last, against the pool). The paced/unpaced
 * ratio is printed only when neither side failed, left unfinished or ended partial a search (compare.ts).
 * `--fetcher http` runs without the challenge (a plain HTTP client cannot pass it) and without Chromium.
 */
import { Command, InvalidArgumentError } from 'commander';
import { startFakeGoogleProcess } from '../support/fakeGoogleProcess.js';
import { pollJob, removeDir, startService, submit, tempDataDir } from '../support/service.js';
import { alternate, type Figure, printRatio } from './compare.js';

const positive = (v: string) => {
  const n = Number(v);
  if (!(n > 0)) throw new InvalidArgumentError('a positive number');
  return n;
};
const opts = new Command('fleet')
  .option('--scale <s>', 'time scale: windows, bans, cooldowns and token lives multiplied by it', positive, 1)
  .option('--searches <n>', 'one-page searches submitted at once', positive, 300)
  .option('--proxies <n>', 'forward proxies', positive, 4)
  .option('--limit <n>', 'requests one proxy may make a window before a ban', positive, 20)
  .option('--fetcher <f>', 'auto (Chromium opens sessions and passes the challenge) or http', 'auto')
  .option('--rounds <n>', 'rounds, sides alternated', positive, 1)
  .option('--paced-only', 'the paced side alone (its figures against the pool; no ratio, there is no other side)')
  .parse()
  .opts<{
    scale: number;
    searches: number;
    proxies: number;
    limit: number;
    fetcher: string;
    rounds: number;
    pacedOnly?: boolean;
  }>();

const ADMIN = 'fleet-bench-admin-token-0123456789';
const windowMs = Math.round(60_000 * opts.scale);
/** what the pool allows: every proxy at its limit, in searches a minute */
const allowedPerMin = (opts.proxies * opts.limit * 60_000) / windowMs;
const idealMs = (opts.searches / allowedPerMin) * 60_000;

interface Side {
  name: 'paced' | 'unpaced';
  done: number;
  /** searches that ended partial (a one-page search should not): shown apart, and no ratio with any */
  partial: number;
  failed: Record<string, number>;
  unfinished: number;
  elapsedMs: number;
  requests: number;
  whileBanned: number;
  bans: number;
  tokens: number;
  /** from the first submit to the origin's first request (the service taking jobs, Chromium opening sessions) */
  startupMs: number;
  /** from the origin's first request to its last: the time the routes were in use */
  crawlMs: number;
}

const runSide = async (name: Side['name']): Promise<Side> => {
  const challenge = opts.fetcher === 'auto';
  const google = await startFakeGoogleProcess(30, [
    '--adversary',
    '--one-page',
    '--proxies',
    String(opts.proxies),
    '--rate-limit',
    String(opts.limit),
    '--window-ms',
    String(windowMs),
    '--ban-ms',
    String(windowMs),
    '--token-requests',
    challenge ? '100' : '0',
    '--token-ttl-ms',
    String(10 * windowMs),
    '--error-rate',
    '0.01',
    '--hang-rate',
    '0',
  ]);
  const data = tempDataDir('serp-bench-fleet');
  const paced = name === 'paced';
  const svc = await startService(data, {
    SERP_GOOGLE_ORIGIN: google.origin,
    SERP_FETCHER: opts.fetcher,
    SERP_PROXY_URLS: google.proxies.join(','),
    SERP_ADMIN_TOKEN: ADMIN,
    // paced: L a window, resting a window after a block; unpaced: today's crawler (2 s doubling to 120 s)
    SERP_ROUTE_MAX_RPM: paced ? String(Math.floor(allowedPerMin / opts.proxies)) : '0',
    SERP_ROUTE_COOLDOWN_S: String((paced ? 60 : 2) * opts.scale),
    SERP_ROUTE_COOLDOWN_MAX_S: String((paced ? 1800 : 120) * opts.scale),
    SERP_NO_ROUTE_WAIT_S: String(120 * opts.scale),
  }).catch(async (err) => {
    // a service that did not start leaves no fake Google behind
    await google.close();
    removeDir(data);
    throw err;
  });
  try {
    const { key } = (await (
      await fetch(`${svc.url}/admin/api/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tier: 'enterprise', rate_limit_per_min: 100_000 }),
      })
    ).json()) as { key: string };
    const started = Date.now();
    const jobs = await Promise.all(
      Array.from({ length: opts.searches }, async (_, i) => {
        const res = await submit(svc.url, key, { keyword: `fleet ${name} ${i}`, capture_aio: false });
        return ((await res.json()) as { job_id: string }).job_id;
      }),
    );
    // three times the ideal and two windows more, and never under five minutes (a slow machine's service is slower)
    const deadline = started + Math.max(idealMs * 3 + 2 * windowMs, 300_000);
    const ended = new Map<string, { status: string; at: number; detail?: string }>();
    while (ended.size < jobs.length && Date.now() < deadline) {
      const open = jobs.filter((j) => !ended.has(j));
      for (let i = 0; i < open.length; i += 20) {
        await Promise.all(
          open.slice(i, i + 20).map(async (j) => {
            const res = await pollJob(svc.url, key, j, 'json', 0);
            if (res.status === 202) return void (await res.arrayBuffer());
            const body = (await res.json()) as {
              status?: string;
              detail?: string;
              search_metadata?: { status: string; processed_at?: string };
            };
            // when the service finished the job, not when this loop saw it (up to a poll round later)
            const processed = Date.parse(body.search_metadata?.processed_at ?? '');
            ended.set(j, {
              status: body.search_metadata?.status ?? body.status ?? 'failed',
              at: Number.isFinite(processed) ? processed : Date.now(),
              ...(body.detail ? { detail: body.detail } : {}),
            });
          }),
        );
      }
      await new Promise((r) => setTimeout(r, 1_000));
    }
    const stats = (await (await fetch(`${google.origin}/__fake/adversary`)).json()) as {
      requests: number;
      whileBanned: number;
      bans: number;
      tokens: number;
      firstAt?: number;
      lastAt?: number;
    };
    const done = [...ended.values()].filter((e) => e.status === 'done');
    const partial = [...ended.values()].filter((e) => e.status === 'partial').length;
    const failed: Record<string, number> = {};
    for (const e of ended.values()) {
      if (e.status === 'done' || e.status === 'partial') continue;
      const kind = /every proxy/.test(e.detail ?? '')
        ? 'no_route'
        : /block/i.test(e.detail ?? '')
          ? 'blocked'
          : 'other';
      failed[kind] = (failed[kind] ?? 0) + 1;
    }
    return {
      name,
      done: done.length,
      partial,
      failed,
      unfinished: jobs.length - ended.size,
      elapsedMs: (done.length ? Math.max(...done.map((e) => e.at)) : Date.now()) - started,
      requests: stats.requests,
      whileBanned: stats.whileBanned,
      bans: stats.bans,
      tokens: stats.tokens,
      startupMs: (stats.firstAt ?? started) - started,
      crawlMs: (stats.lastAt ?? started) - (stats.firstAt ?? started),
    };
  } finally {
    await svc.kill();
    await google.close();
    removeDir(data);
  }
};

const pct = (n: number) => `${(n * 100).toFixed(1)} %`;
const row = (s: Side) => {
  const failed = Object.values(s.failed).reduce((a, b) => a + b, 0);
  const perMin = s.done / (s.elapsedMs / 60_000);
  return {
    side: s.name,
    'done %': pct(s.done / opts.searches),
    partial: s.partial,
    failed: failed ? JSON.stringify(s.failed) : '0',
    unfinished: s.unfinished,
    'time s': (s.elapsedMs / 1000).toFixed(0),
    'searches/min': perMin.toFixed(1),
    'of pool %': pct(perMin / allowedPerMin),
    'startup s': (s.startupMs / 1000).toFixed(1),
    // what the routes carried while in use: every request the origin saw, against what the pool allows
    'origin pace %': pct(s.requests / Math.max(1, s.crawlMs / 60_000) / allowedPerMin),
    'to banned %': pct(s.whileBanned / Math.max(1, s.requests)),
    bans: s.bans,
    'requests/search': (s.requests / Math.max(1, s.done)).toFixed(3),
    tokens: s.tokens,
  };
};

console.log(
  `fleet: ${opts.proxies} proxies × ${opts.limit} requests per ${windowMs / 1000} s window (pool ${allowedPerMin.toFixed(0)} searches/min), ${opts.searches} one-page searches at once, fetcher ${opts.fetcher}; ideal ${(idealMs / 1000).toFixed(0)} s`,
);
if (opts.pacedOnly) {
  const rows: Side[] = [];
  for (let i = 0; i < opts.rounds; i++) rows.push(await runSide('paced'));
  console.table(rows.map(row));
  process.exit(0);
}
const sides = await alternate(
  opts.rounds,
  { paced: () => runSide('paced'), unpaced: () => runSide('unpaced') },
  (_, r) => {
    for (const side of [r.paced, r.unpaced]) console.log(JSON.stringify(row(side)));
  },
);
console.table([...sides.paced, ...sides.unpaced].map(row));
/** searches done per minute, averaged over a side's rounds; every failed, partial or unfinished search a failure */
const throughput = (s: Side[]): Figure => ({
  value: s.reduce((n, r) => n + r.done / (r.elapsedMs / 60_000), 0) / s.length,
  failures: s.reduce((n, r) => n + Object.values(r.failed).reduce((a, b) => a + b, 0) + r.partial + r.unfinished, 0),
});
printRatio('throughput paced / unpaced', throughput(sides.paced), throughput(sides.unpaced), ['paced', 'unpaced']);
