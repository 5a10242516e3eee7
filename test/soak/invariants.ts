import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JobRecord, Journal } from './journal.js';
import { JOB_LIMITS } from './stack.js';
import type { Read, Traffic } from './traffic.js';

/**
 * The soak's invariants (docs/operations.md#the-soak), each a pass or a failure with the figures it was judged on and
 * the events that broke it. None is loosened to pass: a bound is the one the service's own settings imply.
 */

export interface Invariant {
  name: string;
  ok: boolean;
  /** the figures, one line */
  summary: string;
  /** what broke it: job ids and their events, exits with their last lines, … (empty when it holds) */
  evidence: string[];
}

export const INVARIANTS = [
  'no unplanned process exit',
  'every accepted job ends once, within its bound',
  'usage equals what was charged, no reservation leaks',
  'every webhook message is delivered at least once',
  'RSS at the end within 15 % of after warm-up',
  'HTTP thread event-loop delay p99 under 100 ms',
  "reads' p99 within 2x idle",
  'no 5xx answer',
] as const;

const quantile = (values: readonly number[], q: number): number => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
};
export const p99 = (values: readonly number[]) => quantile(values, 0.99);
export const p50 = (values: readonly number[]) => quantile(values, 0.5);
const ms = (n: number) => `${n.toFixed(1)} ms`;

/**
 * The longest a job may take from its submit to its end: a wait in its lane, then its pages: the first, and the rest
 * five at a time (SERP_PAGES_IN_FLIGHT), each page up to 4 attempts of a 30 s deadline with the longest rest between,
 * and one wait for a route (SERP_NO_ROUTE_WAIT_S). A cluster adds the redelivery of a killed crawler's job and the
 * processes' down time.
 */
export const jobBoundMs = (depth: number, cluster: boolean) => {
  const pages = Math.max(1, Math.ceil(depth / 10));
  const stages = 1 + Math.ceil((pages - 1) / 5);
  const perPage =
    JOB_LIMITS.attemptsPerPage * (JOB_LIMITS.pageTimeoutS + JOB_LIMITS.cooldownMaxS) + JOB_LIMITS.noRouteWaitS;
  const queue = 60 + (cluster ? 30 : 0);
  return (queue + stages * perPage) * 1000;
};

const describeJob = (j: JobRecord) =>
  `${j.id} (${j.lane}, depth ${j.depth}, "${j.keyword}", submitted ${new Date(j.submittedAt).toISOString()}, ${j.starts} crawl starts, ends: ${
    j.ends
      .map((e) => `${e.type}/${e.status}${e.kind ? `:${e.kind}` : ''}@${new Date(e.at).toISOString()}`)
      .join(', ') || 'none'
  })`;

/** jobs still open past their bound at `now` (checked while the soak runs, and at its end) */
export const overdueJobs = (journal: Journal, now: number, cluster: boolean): JobRecord[] =>
  [...journal.jobs.values()].filter((j) => j.ends.length === 0 && now - j.submittedAt > jobBoundMs(j.depth, cluster));

export const checkJobs = (
  journal: Journal,
  traffic: Traffic,
  cluster: boolean,
  overdueSeen: Map<string, string>,
  /** jobs an api still answered `running` for after the drain (read on every api) */
  stillRunning: string[],
  /** each api's projection lag and queue depth after the drain (/metrics), shown when a job still reads running */
  metrics: string[] = [],
) => {
  const evidence: string[] = [];
  const all = [...journal.jobs.values()];
  const twice = all.filter((j) => j.ends.length > 1);
  const open = all.filter((j) => j.ends.length === 0);
  const late = all.filter((j) => j.ends.length > 0 && j.ends[0]!.at - j.submittedAt > jobBoundMs(j.depth, cluster));
  const lost = [...traffic.jobs.values()].filter((t) => !journal.jobs.has(t.id));
  for (const j of twice) evidence.push(`ended ${j.ends.length} times: ${describeJob(j)}`);
  for (const j of open) evidence.push(`never ended: ${describeJob(j)}`);
  for (const j of late)
    evidence.push(`ended past its bound of ${jobBoundMs(j.depth, cluster) / 1000} s: ${describeJob(j)}`);
  for (const t of lost) evidence.push(`answered ${t.via} ${t.id} but no SearchSubmitted in the log`);
  if (stillRunning.length) evidence.push(`after the drain, /metrics said: ${metrics.join('; ')}`);
  for (const r of stillRunning) evidence.push(`still running for its user: ${r}`);
  // found while it ran (the live check): each is among the late or the open above, with when it was first seen
  for (const [, what] of overdueSeen) evidence.push(`seen past its bound while the soak ran: ${what}`);
  const took = (lane: string) =>
    all.filter((j) => j.lane === lane && j.ends[0]).map((j) => j.ends[0]!.at - j.submittedAt);
  const lanes = ['live', 'scheduled', 'bulk']
    .map(
      (l) =>
        `${l} ${took(l).length} (p50 ${(p50(took(l)) / 1000).toFixed(1)} s, max ${(Math.max(0, ...took(l)) / 1000).toFixed(1)} s)`,
    )
    .join('; ');
  return {
    name: INVARIANTS[1],
    ok: evidence.length === 0,
    summary: `${all.length} jobs in the log (${traffic.jobs.size} answered to the harness): ${twice.length} ended twice, ${open.length} never ended, ${late.length} past their bound, ${lost.length} lost, ${stillRunning.length} still running on an api after the drain; by lane, submit to end: ${lanes}`,
    evidence,
  } satisfies Invariant;
};

export interface UsageView {
  label: string;
  keyId: string;
  /** GET /v1/usage used_this_month after the drain */
  used: number | undefined;
  /**
   * the harness's own count by the docs' rules: a new search 1; from cache 0; failed or still placed elsewhere after
   * its retry 0 (its reservation released)
   */
  expected: number;
  /** submits whose answer never came (each may or may not have reserved) */
  unknown: number;
  /** jobs whose final state neither an api nor the log could say */
  unread: string[];
}

export const checkUsage = (journal: Journal, views: UsageView[]) => {
  const evidence: string[] = [];
  const lines: string[] = [];
  for (const v of views) {
    const reserved = journal.reserved.get(v.keyId) ?? new Map<string, number>();
    const released = journal.released.get(v.keyId) ?? new Map<string, number>();
    const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
    const net = sum(reserved) - sum(released);
    const strays: string[] = [];
    for (const [job, n] of reserved) {
      const j = journal.jobs.get(job);
      if (n > 1) evidence.push(`${v.label}: ${job} reserved ${n} times`);
      if (!j) {
        strays.push(job);
        continue;
      }
      const failed = j.ends.some((e) => e.status === 'failed');
      if (failed && !released.has(job))
        evidence.push(`${v.label}: ${job} failed and its reservation was never released`);
      if (j.ends.some((e) => e.kind === 'placed_elsewhere') && !released.has(job))
        evidence.push(`${v.label}: ${job} ended placed elsewhere and its reservation was never released`);
    }
    for (const [job, n] of released) {
      const j = journal.jobs.get(job);
      if (n > 1) evidence.push(`${v.label}: ${job} released ${n} times`);
      // a failed job gives its quota back, and so does one still placed elsewhere after its retry (docs/locations.md#the-retry)
      if (j && !j.ends.some((e) => e.status === 'failed' || e.kind === 'placed_elsewhere') && j.ends.length > 0)
        evidence.push(`${v.label}: ${job} released though it ended ${j.ends[0]!.status}`);
    }
    if (strays.length > v.unknown)
      evidence.push(
        `${v.label}: ${strays.length} reservations without a job, more than the ${v.unknown} submits whose answer never came: ${strays.slice(0, 10).join(', ')}`,
      );
    if (v.used !== net)
      evidence.push(`${v.label}: GET /v1/usage says ${v.used}, the log's reservations less releases ${net}`);
    if (v.used === undefined || v.used < v.expected || v.used > v.expected + v.unknown)
      evidence.push(
        `${v.label}: used ${v.used}, but the harness was charged ${v.expected} by the docs' rules (+ up to ${v.unknown} unanswered submits)`,
      );
    if (v.unread.length)
      evidence.push(`${v.label}: ${v.unread.length} jobs' final state unreadable: ${v.unread.slice(0, 5).join(', ')}`);
    lines.push(
      `${v.label} used ${v.used} / charged ${v.expected}${v.unknown ? ` (+${v.unknown} unknown)` : ''} / log ${net}`,
    );
  }
  return { name: INVARIANTS[2], ok: evidence.length === 0, summary: lines.join('; '), evidence } satisfies Invariant;
};

export interface WebhookView {
  label: string;
  path: string;
  /** (type, id) the endpoint must have got */
  expected: Set<string>;
  /** (type, id) it got, verified */
  received: Set<string>;
  /** deliveries whose signature did not verify */
  unverified: number;
  /** all the requests it got, duplicates included */
  requests: number;
}

export const missingOf = (v: WebhookView) => [...v.expected].filter((m) => !v.received.has(m));

export const checkWebhooks = (views: WebhookView[], waitedS: number) => {
  const evidence: string[] = [];
  for (const v of views) {
    const missing = missingOf(v);
    if (missing.length)
      evidence.push(
        `${v.label} (${v.path}): ${missing.length} of ${v.expected.size} never arrived within ${waitedS} s of the drain: ${missing.slice(0, 10).join(', ')}`,
      );
    if (v.unverified) evidence.push(`${v.label}: ${v.unverified} deliveries whose signature did not verify`);
  }
  return {
    name: INVARIANTS[3],
    ok: evidence.length === 0,
    summary: views
      .map((v) => `${v.label} ${v.expected.size - missingOf(v).length}/${v.expected.size} (${v.requests} requests)`)
      .join('; '),
    evidence,
  } satisfies Invariant;
};

/** the probe's seconds (loopProbe.mjs) of the given pids, merged into one distribution: its p99 and how many */
export const loopDelay = (probeDir: string, pids: Map<number, string>, from: number, skipFirstMs: number) => {
  const mass: [number, number][] = [];
  let seconds = 0;
  let worst = { ms: 0, at: 0, name: '' };
  for (const file of readdirSync(probeDir)) {
    const pid = Number(file.replace('.jsonl', ''));
    const name = pids.get(pid);
    if (!name) continue;
    const lines = readFileSync(join(probeDir, file), 'utf8').split('\n').filter(Boolean);
    const first = lines.length ? (JSON.parse(lines[0]!) as { t: number }).t : 0;
    for (const line of lines) {
      let s: { t: number; n: number; max: number; steps: [number, number][] };
      try {
        s = JSON.parse(line);
      } catch {
        continue;
      }
      // a process's own start (its modules loading) is not the loop's delay under load
      if (s.t < from || s.t - first < skipFirstMs) continue;
      seconds += 1;
      if (s.max > worst.ms) worst = { ms: s.max, at: s.t, name };
      let prev = 0;
      for (const [p, value] of s.steps) {
        mass.push([value, ((p - prev) / 100) * s.n]);
        prev = p;
      }
    }
  }
  mass.sort((a, b) => a[0] - b[0]);
  const total = mass.reduce((a, [, w]) => a + w, 0);
  let acc = 0;
  let p99v = Number.NaN;
  for (const [value, w] of mass) {
    acc += w;
    if (acc >= 0.99 * total) {
      p99v = value;
      break;
    }
  }
  return { p99: p99v, seconds, worst };
};

export const checkLoop = (d: ReturnType<typeof loopDelay>) =>
  ({
    name: INVARIANTS[5],
    ok: d.seconds > 0 && d.p99 < 100,
    summary: `p99 ${ms(d.p99)} over ${d.seconds} process-seconds (values include the 10 ms sampling resolution); the worst second's max ${ms(d.worst.ms)} (${d.worst.name})`,
    evidence:
      d.seconds === 0
        ? ['the probe recorded nothing']
        : d.p99 < 100
          ? []
          : [`p99 ${ms(d.p99)}; worst at ${new Date(d.worst.at).toISOString()} in ${d.worst.name}: ${ms(d.worst.ms)}`],
  }) satisfies Invariant;

/**
 * Where slow reads' time went, per route, from each answer's Server-Timing header (docs/api.md#server-timing): how
 * many, their median as the harness timed them against the median the handler itself took and the median since the
 * server took the request (its checks before the handler too; the rest is the event loops' queues and the socket),
 * each timed part's median, and for results how each answer was made (`stored` bytes, the `pipeline` thread's render,
 * `rendered` on the HTTP thread).
 */
export const whereReadsWent = (reads: readonly Read[]): string => {
  const routes = [...new Set(reads.map((r) => r.route))].sort();
  return routes
    .map((route) => {
      const of = reads.filter((r) => r.route === route);
      const timed = of.filter((r) => r.serverTiming);
      if (timed.length === 0) return `${route} ${of.length}, median ${ms(p50(of.map((r) => r.ms)))}`;
      const names = [...new Set(timed.flatMap((r) => Object.keys(r.serverTiming!)))].sort();
      const parts = names
        .filter((n) => n !== 'total' && n !== 'request')
        .map((n) => {
          const durs = timed.map((r) => r.serverTiming![n]?.dur).filter((d): d is number => d !== undefined);
          const descs: Record<string, number> = {};
          for (const r of timed) {
            const d = r.serverTiming![n]?.desc;
            if (d !== undefined) descs[d] = (descs[d] ?? 0) + 1;
          }
          const described = Object.entries(descs)
            .sort()
            .map(([d, c]) => `${d} ${c}`)
            .join(', ');
          return durs.length > 0 ? `${n} ${ms(p50(durs))} (${durs.length})` : `${n}: ${described}`;
        });
      const inHandler = timed.map((r) => r.serverTiming!.total?.dur ?? 0);
      const since = timed.map((r) => r.serverTiming!.request?.dur).filter((d): d is number => d !== undefined);
      const inServer = since.length
        ? `, since the server took it ${ms(p50(since))} (max ${ms(Math.max(...since))})`
        : '';
      return `${route} ${of.length}, median ${ms(p50(of.map((r) => r.ms)))} of which in the handler ${ms(p50(inHandler))} (max ${ms(Math.max(...inHandler))})${inServer}${parts.length ? `: ${parts.join(', ')}` : ''}`;
    })
    .join('; ');
};

/** the share of the time some task on the host waited for a core (/proc/pressure/cpu), as a percentage */
const pressureText = (share: number | undefined) => (share === undefined ? 'unknown' : `${(share * 100).toFixed(0)} %`);

export const checkReads = (
  idleReads: Read[],
  duringReads: Read[],
  /** the host's CPU pressure while each was measured: the reads' figures are read against it */
  pressure: { idle?: number; during?: number } = {},
) => {
  const idle = idleReads.map((r) => r.ms);
  const during = duringReads.map((r) => r.ms);
  const i = p99(idle);
  const d = p99(during);
  const ok = idle.length > 0 && during.length > 0 && d <= 2 * i;
  const routes = [...new Set([...idleReads, ...duringReads].map((r) => r.route))].sort();
  const byRoute = routes
    .map((route) => {
      const a = idleReads.filter((r) => r.route === route).map((r) => r.ms);
      const b = duringReads.filter((r) => r.route === route).map((r) => r.ms);
      return `${route}: p99 ${ms(p99(b))} (${b.length}) against ${ms(p99(a))} idle (${a.length})`;
    })
    .join('; ');
  const slow = duringReads.filter((r) => r.ms > 2 * i);
  const lagged = slow.filter((r) => r.harnessLagMs > 10);
  return {
    name: INVARIANTS[6],
    ok,
    summary: `p99 ${ms(d)} under the soak (${during.length} reads, p50 ${ms(p50(during))}) against ${ms(i)} idle (${idle.length} reads, p50 ${ms(p50(idle))}): ${(d / i).toFixed(2)}x; by route: ${byRoute}; ${slow.length} reads past 2x idle p99, ${lagged.length} of them sent after the harness's own loop was over 10 ms late (the reader times them in a process of its own)${slow.length ? ` (by route, where their time went: ${whereReadsWent(slow)}; idle, the same: ${whereReadsWent(idleReads)})` : ''}; the host's CPU pressure (some task waiting for a core) ${pressureText(pressure.idle)} of the time while idle was measured, ${pressureText(pressure.during)} during the faults`,
    evidence: ok ? [] : [`reads p99 ${ms(d)} > 2 × idle p99 ${ms(i)}`],
  } satisfies Invariant;
};
