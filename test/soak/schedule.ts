import { createHash } from 'node:crypto';
import { seeded } from '../support/adversary.js';
import type { Trouble } from '../support/fakeGoogle.js';

/**
 * The soak's seeded schedule of faults (docs/operations.md#the-soak): the same seed and length give the same faults at
 * the same moments, as a seeded simulation replays a failing run. Times are milliseconds from the start of the fault
 * phase (after the warm-up).
 */

/** What the fake Google answers in place of a share of result pages while the fault lasts. */
export const GOOGLE_FAULTS = {
  captcha: { kind: 'captcha' },
  sorry_redirect: { kind: 'sorry_redirect' },
  js_challenge: { kind: 'js_challenge' },
  status_429: { kind: 'status', status: 429 },
  status_5xx: { kind: 'status', status: 503 },
  reset: { kind: 'reset' },
  trickle: { kind: 'trickle', forMs: 40_000 },
  truncated: { kind: 'truncated' },
  malformed: { kind: 'malformed' },
  oversized: { kind: 'oversized', mb: 9 },
  gzip_bomb: { kind: 'gzip_bomb', inflatedMb: 256 },
  redirect_loop: { kind: 'redirect_loop' },
} as const satisfies Record<string, Trouble>;
export type GoogleFaultKind = keyof typeof GOOGLE_FAULTS;

/** faults that are not a page's answer: the network, the receivers, the service's own processes */
export type OtherFaultKind =
  /** a proxy's home city wins over the uule for every search through it (docs/locations.md) */
  | 'placed_elsewhere'
  | 'proxy_down'
  | 'receiver_hang'
  | 'receiver_500'
  | 'receiver_gone'
  /** a key's whole hourly allowance of replays (10) at once, and one more (docs/webhooks.md#replay-bounded) */
  | 'replay_at_caps'
  | 'kill_crawler'
  | 'kill_dispatcher'
  | 'kill_api'
  | 'nats_restart';
export type FaultKind = GoogleFaultKind | OtherFaultKind;

export interface Fault {
  /** its index in the schedule, for the report */
  id: number;
  kind: FaultKind;
  /** from the start of the fault phase */
  at: number;
  /** how long it lasts (0: an instant, e.g. a replay) */
  durationMs: number;
  /** a Google fault's share of the result pages it answers (0–1) */
  share?: number;
  /** which proxy, receiver or process (by index in its own list) */
  target?: number;
}

export interface ScheduleOptions {
  seed: number;
  /** length of the fault phase */
  faultMs: number;
  cluster: boolean;
  proxies: number;
  receivers: number;
}

/** a Fisher-Yates shuffle driven by `random` */
const shuffled = <T>(items: readonly T[], random: () => number): T[] => {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
};

export const buildSchedule = (o: ScheduleOptions): Fault[] => {
  const random = seeded(o.seed);
  const between = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const faults: Omit<Fault, 'id'>[] = [];
  // the last stretch of the phase has no new Google fault, so jobs started in it meet the page deadline at most once
  const googleEnd = o.faultMs - 10_000;

  // Google's answers: one kind at a time, in windows of 5-9 s with 1-4 s of quiet between; every kind once (in a
  // seeded order) before any comes again, so a 3-minute soak meets all twelve
  const kinds = Object.keys(GOOGLE_FAULTS) as GoogleFaultKind[];
  let order = shuffled(kinds, random);
  for (let at = between(1_000, 3_000); ; ) {
    const durationMs = between(5_000, 9_000);
    if (at + durationMs > googleEnd) break;
    if (order.length === 0) order = shuffled(kinds, random);
    const kind = order.shift()!;
    // the slow ones hold a crawl slot for the page deadline each: a smaller share keeps them from taking the fleet
    const share = kind === 'trickle' || kind === 'gzip_bomb' ? 0.2 : Number((0.25 + random() * 0.25).toFixed(2));
    faults.push({ kind, at, durationMs, share });
    at += durationMs + between(1_000, 4_000);
  }

  // the network: a proxy dies and comes back, and a proxy places searches elsewhere, each about every 40 s
  for (let at = between(5_000, 15_000); at < googleEnd; at += between(30_000, 50_000)) {
    faults.push({ kind: 'proxy_down', at, durationMs: between(5_000, 15_000), target: between(0, o.proxies - 1) });
  }
  for (let at = between(10_000, 25_000); at < googleEnd; at += between(35_000, 55_000)) {
    faults.push({
      kind: 'placed_elsewhere',
      at,
      durationMs: between(8_000, 15_000),
      target: between(0, o.proxies - 1),
    });
  }

  // receivers: one misbehaves at a time, then answers again (and gets its backlog)
  const receiverKinds = ['receiver_hang', 'receiver_500', 'receiver_gone'] as const;
  let rOrder = shuffled(receiverKinds, random);
  for (let at = between(3_000, 10_000); at < o.faultMs - 20_000; ) {
    if (rOrder.length === 0) rOrder = shuffled(receiverKinds, random);
    const durationMs = between(8_000, 20_000);
    faults.push({ kind: rOrder.shift()!, at, durationMs, target: between(0, o.receivers - 1) });
    at += durationMs + between(5_000, 15_000);
  }

  // replays at the caps, once, in the middle third
  faults.push({ kind: 'replay_at_caps', at: between(o.faultMs / 3, (2 * o.faultMs) / 3), durationMs: 0 });

  // the service's own processes (a cluster only): each role killed once, and a NATS node restarted, spread over the
  // phase in a seeded order; the harness restarts each after its down time (planned exits)
  if (o.cluster) {
    const procs = shuffled(['kill_crawler', 'kill_dispatcher', 'kill_api', 'nats_restart'] as const, random);
    const slot = (o.faultMs - 30_000) / procs.length;
    procs.forEach((kind, i) => {
      faults.push({
        kind,
        at: Math.round(10_000 + i * slot + random() * slot * 0.5),
        durationMs: between(2_000, 5_000),
        target: between(0, 1),
      });
    });
  }

  return faults.sort((a, b) => a.at - b.at || a.kind.localeCompare(b.kind)).map((f, id) => ({ id, ...f }));
};

/** a short fingerprint of a schedule: two runs with the same one met the same faults at the same moments */
export const scheduleDigest = (faults: readonly Fault[]) =>
  createHash('sha256').update(JSON.stringify(faults)).digest('hex').slice(0, 12);
