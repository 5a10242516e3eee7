import type { Config } from '../config/config.js';

/**
 * Per-route pacing (docs/fleet.md), as pure functions of a route's state and the time: the session pool
 * (sessions.ts) holds one state per route and asks these when a request may go and what an answer teaches.
 *
 * The rate is a token bucket in its virtual-scheduling form (GCRA): `tat` is when the route's next request is due
 * at its rate; a request of cost k may go once `now ≥ tat + (k − 1 − (burst − 1)) × spacing`, and pushes `tat` on by
 * k spacings. Google counts the requests an address made in a rolling minute, so the bucket holds one request
 * (`burst` 1) and requests go 5 % further apart than the rate says (`guard`): a rate of r never puts more than r
 * requests into any minute, even when one arrives late by up to a twentieth of their spacing.
 *
 * The rate is learned from Google's answers (additive increase, multiplicative decrease): a block cuts it and parks
 * the route for its cooldown, and remembers 90 % of the pace that was blocked as a ceiling that successes climb back
 * to quickly and do not pass while it holds (`ceilingMs`); past it, successes probe upward slowly, to `maxRpm`.
 */
export interface PacingPolicy {
  /** SERP_ROUTE_MAX_RPM: the most requests a minute a route is paced at, and where it starts; 0: no pacing */
  maxRpm: number;
  /** the least a block cuts a rate to (default 1) */
  minRpm: number;
  /** a block multiplies the rate by this (default 0.5) */
  decrease: number;
  /** requests a minute each success adds back while under the ceiling (default 1) */
  recoverRpm: number;
  /** with no ceiling, each success adds `probeRpm / rpm`: `probeRpm` more a minute per minute of full use (default 1) */
  probeRpm: number;
  /** how long a block's ceiling holds (default 30 min) */
  ceilingMs: number;
  /** requests that may go back to back from an idle route (default 1) */
  burst: number;
  /** spacing slack over the rate (default 0.05: a request's arrival may lag its departure by 5 % of a spacing) */
  guard: number;
  /** SERP_ROUTE_COOLDOWN_S: a route's first cooldown after a block; doubles per consecutive block */
  cooldownBaseMs: number;
  /** SERP_ROUTE_COOLDOWN_MAX_S: the longest cooldown */
  cooldownMaxMs: number;
}

/** The pace's tuning, the same for every deployment (docs/fleet.md); the rest of a policy is configuration. */
export const PACING_TUNING: Omit<PacingPolicy, RouteSettingName> = {
  minRpm: 1,
  decrease: 0.5,
  recoverRpm: 1,
  probeRpm: 1,
  ceilingMs: 30 * 60_000,
  burst: 1,
  guard: 0.05,
};

type RouteSettingName = 'maxRpm' | 'cooldownBaseMs' | 'cooldownMaxMs';

/** A route's policy: the tuning, and the configuration's ceiling and cooldowns (the schema has their defaults). */
export const pacingPolicy = (
  settings: Pick<Config, 'routeMaxRpm' | 'routeCooldownS' | 'routeCooldownMaxS'>,
): PacingPolicy => ({
  ...PACING_TUNING,
  maxRpm: settings.routeMaxRpm,
  cooldownBaseMs: Math.round(settings.routeCooldownS * 1000),
  cooldownMaxMs: Math.round(settings.routeCooldownMaxS * 1000),
});

export interface RouteHealth {
  /** the rate the route is paced at, requests a minute (meaningless with pacing off) */
  rpm: number;
  /** when the next request is due at that rate (ms) */
  tat: number;
  /** 90 % of the pace a block met, and when: the rate climbs back to it and stays under it while it holds */
  ceiling?: number;
  ceilingAt?: number;
  /** parked until then after a block */
  coolUntil: number;
  /** blocks in a row (a success ends the streak): each doubles the cooldown */
  streak: number;
  /** when its requests of the last minute went */
  sent: number[];
}

const MINUTE = 60_000;

export const pacing = (policy: PacingPolicy) => policy.maxRpm > 0;

export const newRoute = (policy: PacingPolicy): RouteHealth => ({
  rpm: policy.maxRpm,
  tat: 0,
  coolUntil: 0,
  streak: 0,
  sent: [],
});

/** ms between two requests at the route's rate */
export const spacingOf = (r: RouteHealth, policy: PacingPolicy) => (MINUTE / r.rpm) * (1 + policy.guard);

const recent = (sent: number[], now: number) => sent.filter((t) => t > now - MINUTE);

/** requests the route sent in the minute before `now` */
export const sentLastMinute = (r: RouteHealth, now: number) => recent(r.sent, now).length;

/** when `cost` requests may go on this route back to back: after its cooldown, and when its rate allows */
export const readyAt = (r: RouteHealth, policy: PacingPolicy, cost: number): number => {
  if (!pacing(policy)) return r.coolUntil;
  const due = r.tat + (cost - policy.burst) * spacingOf(r, policy);
  return Math.max(r.coolUntil, due);
};

/** `cost` requests go now */
export const spend = (r: RouteHealth, policy: PacingPolicy, cost: number, now: number): RouteHealth => ({
  ...r,
  tat: pacing(policy) ? Math.max(r.tat, now) + cost * spacingOf(r, policy) : r.tat,
  sent: [...recent(r.sent, now), ...Array.from({ length: cost }, () => now)],
});

/**
 * What a request actually cost against what was reserved for it: a redirect followed or a challenge's reload is one
 * more (the next request waits that much longer); a session opening that met no challenge gives its spare back.
 */
export const settle = (r: RouteHealth, policy: PacingPolicy, extra: number, now: number): RouteHealth => {
  if (extra === 0) return r;
  const sent = recent(r.sent, now);
  if (extra > 0) sent.push(...Array.from({ length: extra }, () => now));
  else sent.splice(Math.max(0, sent.length + extra));
  return { ...r, sent, tat: pacing(policy) ? r.tat + extra * spacingOf(r, policy) : r.tat };
};

/**
 * Requests reserved at one moment that went later: a session opening in the browser (Chromium starting, the home
 * page, the challenge's reload) sends its requests, and the page that waited for it, up to seconds after they were
 * spent. Counted from when they were reserved, they would bunch up with the requests paced after them (a route's
 * first minute would hold more than its rate); so the route's next request is pushed back by that delay.
 */
export const deferred = (r: RouteHealth, policy: PacingPolicy, delayMs: number): RouteHealth =>
  pacing(policy) && delayMs > 0 ? { ...r, tat: r.tat + delayMs } : r;

/** An answer with results: the block streak ends, and the rate climbs (additively). */
export const succeeded = (r: RouteHealth, policy: PacingPolicy, now: number): RouteHealth => {
  const next: RouteHealth = { ...r, streak: 0 };
  if (!pacing(policy)) return next;
  const holds = r.ceiling !== undefined && now - (r.ceilingAt ?? 0) < policy.ceilingMs;
  if (!holds) {
    delete next.ceiling;
    delete next.ceilingAt;
  }
  if (holds && r.ceiling !== undefined) {
    next.rpm = Math.min(r.ceiling, r.rpm < r.ceiling ? r.rpm + policy.recoverRpm : r.rpm);
  } else {
    next.rpm = Math.min(policy.maxRpm, r.rpm + policy.probeRpm / r.rpm);
  }
  return next;
};

/**
 * A block (CAPTCHA, 429): the route is parked for its cooldown (doubling per block in a row) and its rate cut
 * (multiplicatively). The ceiling is 90 % of the pace that was blocked: the rate set, or what the route really sent
 * in the last minute when that was less (Google counts what it saw), but no lower than the cut rate.
 */
export const blocked = (r: RouteHealth, policy: PacingPolicy, now: number): RouteHealth => {
  const streak = r.streak + 1;
  const cooldown = Math.min(policy.cooldownMaxMs, policy.cooldownBaseMs * 2 ** (streak - 1));
  const next: RouteHealth = { ...r, streak, coolUntil: Math.max(r.coolUntil, now + cooldown) };
  if (!pacing(policy)) return next;
  const cut = Math.max(policy.minRpm, r.rpm * policy.decrease);
  const seen = sentLastMinute(r, now);
  const ceiling = Math.max(policy.minRpm, Math.min(r.rpm, Math.max(seen, cut)) * 0.9);
  return { ...next, rpm: Math.min(cut, ceiling), ceiling, ceilingAt: now, tat: Math.max(r.tat, next.coolUntil) };
};
