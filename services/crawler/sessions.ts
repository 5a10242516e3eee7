import { randomBytes } from 'node:crypto';
import { LANES, type Lane } from '../../contracts/lanes.js';
import type { Device } from '../../contracts/search.js';
import type { Config } from '../config/config.js';
import { createFairQueue } from '../fairShare/fairQueue.js';
import { deviceProfile } from '../ports/devices.js';
import type { CrawlSession, OpenedSession } from '../ports/fetcher.js';
import { type BlockKind, CrawlAbortedError, CrawlBlockedError, CrawlNoRouteError } from './errors.js';
import {
  blocked,
  deferred,
  newRoute,
  type PacingPolicy,
  pacing,
  pacingPolicy,
  type RouteHealth,
  readyAt,
  sentLastMinute,
  settle,
  spend,
  succeeded,
} from './pacing.js';

/**
 * Routes and sessions (docs/fleet.md). A route is one proxy of SERP_PROXY_URLS (or the direct route without any):
 * Google rate-limits and bans addresses, so a route's pace and cooldown are the proxy's, whatever the device. On each
 * route one live session per device, because Google ties its cookies (and its challenge's token) to the address and
 * user agent that earned them.
 *
 * Acquirers wait in one fair queue (docs/fleet.md#lanes-and-fair-share) for a route that is not cooling down, has a
 * request slot free (its in-flight cap) and whose pace (pacing.ts) lets one more request go; a page is never sent to
 * a route that is cooling down. The next to go is the fair queue's: the highest lane first, each lower lane with pages
 * waiting keeping SERP_LANE_MIN_SHARE of the requests, and between the keys of a lane round robin by page, weighted by
 * their share; a key's own pages go in the order they asked. When every route is cooling down for longer than an
 * acquirer may wait (SERP_NO_ROUTE_WAIT_S), it fails with CrawlNoRouteError.
 *
 * Its configuration: the proxies (none: one direct route), each route's pace and cooldowns (pacing.ts), that wait,
 * the requests in flight at once on one route over every job and page (SERP_ROUTE_MAX_IN_FLIGHT: parallel pages
 * make a job fast, but a burst from one IP is what Google's rate limiter sees), and the lanes' minimum share.
 */
export type RouteSettings = Pick<
  Config,
  | 'proxyUrls'
  | 'routeMaxRpm'
  | 'routeCooldownS'
  | 'routeCooldownMaxS'
  | 'noRouteWaitS'
  | 'routeMaxInFlight'
  | 'laneMinShare'
>;

export interface SessionPoolOptions {
  /**
   * Opens a new session and returns its cookies: the browser visits Google like a person would (passing a challenge
   * on the way), so the http fetcher can reuse its cookies. Without it sessions start with `initialCookies` only.
   */
  open?: (session: CrawlSession, device: Device, signal?: AbortSignal) => Promise<string | OpenedSession>;
  /** the cookies a session starts with (default CONSENT_COOKIE) */
  initialCookies?: string;
  now?: () => number;
}

/** Whose request it is, for the fair queue: the job's lane, its key and the key's share (docs/fleet.md). */
export interface RequestShare {
  lane: Lane;
  key: string;
  weight?: number;
}

export interface AcquireOptions {
  /** whose request it is (default: the live lane's anonymous key, i.e. one queue in arrival order) */
  share?: RequestShare;
  /**
   * routes not to use (a page Google placed elsewhere through them, docs/locations.md#the-retry): another route serves
   * while one is not cooling down, even if the caller must wait for it; with none, an avoided route serves on a new
   * session (its live one for the device is dropped, so new cookies, as a fresh visitor would have)
   */
  avoid?: readonly string[];
  /**
   * the route to use (a route set aside for the search's place, tried again so its record can recover,
   * docs/locations.md#how-routes-are-chosen): every other route is avoided, as `avoid` avoids them
   */
  prefer?: string;
}

/**
 * What a person who answered Google's EU consent page with "Reject all" carries: sessions start with it, so searches
 * targeted at the EU are not sent to the consent interstitial.
 */
export const CONSENT_COOKIE = 'SOCS=CAESEwgDEgk0ODE3Nzk3MjQaAmVuIAEaBgiA_LyaBg';

/** A route as reports show it: never a proxy's credentials. */
export interface RouteReport {
  /** `proxy-2` (its place in SERP_PROXY_URLS, from 1) or `direct` */
  route: string;
  /** the proxy's host:port */
  proxy?: string;
  /** the pace it is allowed now, requests a minute (absent with pacing off) */
  rpm?: number;
  /** cooling down until then (ms since the epoch), when it is */
  coolUntil?: number;
  /** requests it sent in the last minute */
  lastMinute: number;
  inFlight: number;
}

/** The cost of opening a session, for the search that caused it. */
export type OpenCost = (cost: { route: string; requests: number; bytes: number }) => void;

export interface SessionPool {
  /**
   * a live session for this device on a route that may take a request now, waiting in line otherwise; the caller
   * must `release` it when its request is over. Rejects with CrawlNoRouteError when every route cools down too long.
   */
  acquire(device: Device, signal?: AbortSignal, onOpen?: OpenCost, options?: AcquireOptions): Promise<CrawlSession>;
  /** the request made on an acquired session is over; `requests` it made to Google (redirects, reloads; default 1) */
  release(session: CrawlSession, requests?: number): void;
  /** keep the cookies a fetch brought back; the route's streak ends and its pace climbs */
  succeeded(session: CrawlSession, cookies?: string): void;
  /** a ban: drop the session for good, park its route for its cooldown and cut its pace */
  retire(session: CrawlSession): void;
  /**
   * a block page: a CAPTCHA or 429 is a ban (`retire`); a JavaScript challenge (when sessions are opened by a
   * browser, which passes it) or the consent page only drops the session, and the next acquirer opens a new one
   */
  blocked(session: CrawlSession, kind: BlockKind): void;
  /** the route a session runs on, as it stands */
  report(route: string): RouteReport | undefined;
  routes(): RouteReport[];
  stats(): { opened: number; retired: number; proxies: number; inFlight: number; waiting: number };
}

interface Route {
  id: string;
  proxyUrl?: string;
  proxy?: string;
  health: RouteHealth;
  /** requests in flight on this route (acquired, not yet released) */
  inFlight: number;
  live: Map<Device, CrawlSession>;
  /** a session being opened, shared by concurrent acquirers so one browser visit serves them all */
  opening: Map<Device, Promise<CrawlSession>>;
}

interface Waiter {
  device: Device;
  signal?: AbortSignal;
  onOpen?: OpenCost;
  avoid?: readonly string[];
  /** past this, waiting for a banned fleet ends in CrawlNoRouteError */
  deadline: number;
  resolve(session: CrawlSession): void;
  reject(err: unknown): void;
  stopListening(): void;
}

/** what one session opening is reserved on the route's pace: the home page and a challenge's reload */
const OPEN_COST = 2;

const hostOf = (proxyUrl: string): string => {
  try {
    return new URL(proxyUrl).host;
  } catch {
    return 'unparsable proxy URL';
  }
};

const openedOf = (opened: string | OpenedSession): OpenedSession =>
  typeof opened === 'string' ? { cookies: opened, requests: 1, bytes: 0 } : opened;

export const createSessionPool = (settings: RouteSettings, options: SessionPoolOptions = {}): SessionPool => {
  const now = options.now ?? Date.now;
  const policy: PacingPolicy = pacingPolicy(settings);
  const noRouteWaitMs = Math.round(settings.noRouteWaitS * 1000);
  const budget = Math.max(1, settings.routeMaxInFlight);
  const proxies = settings.proxyUrls.length ? settings.proxyUrls : [undefined];
  const routes: Route[] = proxies.map((proxyUrl, i) => ({
    id: proxyUrl ? `proxy-${i + 1}` : 'direct',
    proxyUrl,
    ...(proxyUrl ? { proxy: hostOf(proxyUrl) } : {}),
    health: newRoute(policy),
    inFlight: 0,
    live: new Map(),
    opening: new Map(),
  }));
  const byId = new Map(routes.map((r) => [r.id, r]));
  const bySession = new Map<string, Route>();
  /** the route each handed-out session counts against, kept past retirement until its requests are released */
  const slotOf = new WeakMap<CrawlSession, Route>();
  const waiters = createFairQueue<Waiter, Lane>({ classes: LANES, minShare: settings.laneMinShare });
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Number.POSITIVE_INFINITY;
  let next = 0;
  let opened = 0;
  let retired = 0;

  const drop = (route: Route, session: CrawlSession) => {
    if (!bySession.delete(session.id)) return false;
    for (const [device, s] of route.live) if (s.id === session.id) route.live.delete(device);
    return true;
  };

  const ban = (route: Route) => {
    route.health = blocked(route.health, policy, now());
  };

  const openOn = (route: Route, device: Device, reserved: number, w: Waiter): Promise<CrawlSession> => {
    const pending = route.opening.get(device);
    if (pending) return pending;
    const session: CrawlSession = {
      id: randomBytes(8).toString('hex'),
      route: route.id,
      ...(route.proxyUrl ? { proxyUrl: route.proxyUrl } : {}),
      userAgent: deviceProfile(device).userAgent,
      cookies: options.initialCookies ?? CONSENT_COOKIE,
    };
    const began = now();
    const promise = (async () => {
      if (options.open) {
        const result = openedOf(await options.open(session, device, w.signal));
        // its requests went while it opened, not when they were reserved (pacing.ts `deferred`)
        route.health = deferred(route.health, policy, now() - began);
        route.health = settle(route.health, policy, result.requests - reserved, now());
        w.onOpen?.({ route: route.id, requests: result.requests, bytes: result.bytes });
        if (result.blocked) throw new CrawlBlockedError(result.blocked, 'the home page', 429);
        if (result.cookies) session.cookies = result.cookies;
      }
      opened += 1;
      route.live.set(device, session);
      bySession.set(session.id, route);
      return session;
    })().finally(() => route.opening.delete(device));
    route.opening.set(device, promise);
    return promise;
  };

  /** the waiter at the head goes now on `route`, spending `cost` of its pace */
  const start = (w: Waiter, route: Route, cost: number) => {
    route.health = spend(route.health, policy, cost, now());
    route.inFlight += 1;
    // an avoided route serves only when no other can: on a new session
    const stale = w.avoid?.includes(route.id) ? route.live.get(w.device) : undefined;
    if (stale) drop(route, stale);
    const live = route.live.get(w.device);
    const session = live ? Promise.resolve(live) : openOn(route, w.device, cost - 1, w);
    session.then(
      (s) => {
        slotOf.set(s, route);
        w.resolve(s);
      },
      (err) => {
        route.inFlight -= 1;
        // the home page answered with a ban: the route is banned like any page that meets one
        if (err instanceof CrawlBlockedError) ban(route);
        w.reject(err);
        pump();
      },
    );
  };

  type Choice =
    | { kind: 'go'; route: Route; cost: number }
    | { kind: 'wait'; until: number }
    | { kind: 'banned'; until: number };

  /** the route that can take the device's request soonest (round-robin among equals), or how long until one can */
  const choose = (device: Device, t: number, avoid?: readonly string[]): Choice => {
    let best: { route: Route; cost: number; at: number; index: number } | undefined;
    let cooling = 0;
    let soonestBack = Number.POSITIVE_INFINITY;
    const avoided = (r: Route) => avoid?.includes(r.id) ?? false;
    const skip = avoid?.length ? routes.some((r) => !avoided(r) && r.health.coolUntil <= t) : false;
    for (let i = 0; i < routes.length; i++) {
      const index = (next + i) % routes.length;
      const route = routes[index]!;
      if (skip && avoided(route)) continue;
      if (route.health.coolUntil > t) {
        cooling += 1;
        soonestBack = Math.min(soonestBack, route.health.coolUntil);
        continue;
      }
      if (route.inFlight >= budget) continue;
      const opens =
        (avoided(route) || !route.live.has(device)) && !route.opening.has(device) && options.open !== undefined;
      const cost = opens ? 1 + OPEN_COST : 1;
      // every route ready now ties, so the round-robin order decides among them
      const at = Math.max(t, readyAt(route.health, policy, cost));
      if (!best || at < best.at) best = { route, cost, at, index };
    }
    if (best && best.at <= t) {
      next = (best.index + 1) % routes.length;
      return { kind: 'go', route: best.route, cost: best.cost };
    }
    if (cooling === routes.length) return { kind: 'banned', until: soonestBack };
    // paced or busy: its pace's time, a cooldown's end or a release (which pumps) lets the head go
    return { kind: 'wait', until: Math.min(best?.at ?? Number.POSITIVE_INFINITY, soonestBack) };
  };

  const wakeAt = (at: number) => {
    if (at === Number.POSITIVE_INFINITY || (timer && timerAt <= at)) return;
    clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(
      () => {
        timer = undefined;
        timerAt = Number.POSITIVE_INFINITY;
        pump();
      },
      Math.max(1, at - now()),
    );
  };

  /** serves the queue from its head for as long as routes can take requests now */
  function pump() {
    while (waiters.size > 0) {
      const w = waiters.peek()!;
      const t = now();
      const choice = choose(w.device, t, w.avoid);
      if (choice.kind === 'go') {
        waiters.pop();
        w.stopListening();
        start(w, choice.route, choice.cost);
        continue;
      }
      if (choice.kind === 'banned' && choice.until > w.deadline) {
        waiters.pop();
        w.stopListening();
        w.reject(new CrawlNoRouteError(routes.length, choice.until));
        continue;
      }
      wakeAt(choice.until);
      return;
    }
    // nobody waits: no timer keeps the process up
    clearTimeout(timer);
    timer = undefined;
    timerAt = Number.POSITIVE_INFINITY;
  }

  const routeOf = (session: CrawlSession) => slotOf.get(session) ?? bySession.get(session.id);

  /** once per session: the pages in flight on it that meet the same ban do not double its cooldown again */
  const retire = (session: CrawlSession) => {
    const route = routeOf(session);
    if (!route || !drop(route, session)) return;
    retired += 1;
    ban(route);
    pump();
  };

  const reportOf = (route: Route): RouteReport => {
    const t = now();
    return {
      route: route.id,
      ...(route.proxy ? { proxy: route.proxy } : {}),
      ...(pacing(policy) ? { rpm: Math.round(route.health.rpm * 10) / 10 } : {}),
      ...(route.health.coolUntil > t ? { coolUntil: route.health.coolUntil } : {}),
      lastMinute: sentLastMinute(route.health, t),
      inFlight: route.inFlight,
    };
  };

  return {
    acquire(device, signal, onOpen, acquireOptions) {
      const prefer = acquireOptions?.prefer;
      const avoid =
        prefer && byId.has(prefer) ? routes.filter((r) => r.id !== prefer).map((r) => r.id) : acquireOptions?.avoid;
      return new Promise<CrawlSession>((resolve, reject) => {
        if (signal?.aborted) return reject(new CrawlAbortedError());
        const onAbort = () => {
          waiters.remove(w);
          reject(new CrawlAbortedError());
          pump();
        };
        const w: Waiter = {
          device,
          signal,
          onOpen,
          ...(avoid?.length ? { avoid } : {}),
          deadline: now() + noRouteWaitMs,
          resolve,
          reject,
          stopListening: () => signal?.removeEventListener('abort', onAbort),
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        const share = acquireOptions?.share;
        waiters.push(w, {
          cls: share?.lane ?? 'live',
          flow: share?.key ?? '',
          ...(share?.weight !== undefined ? { weight: share.weight } : {}),
        });
        pump();
      });
    },
    release(session, requests = 1) {
      const route = slotOf.get(session);
      if (!route || route.inFlight === 0) return;
      route.inFlight -= 1;
      if (requests !== 1) route.health = settle(route.health, policy, requests - 1, now());
      pump();
    },
    succeeded(session, cookies) {
      const route = routeOf(session);
      if (!route) return;
      route.health = succeeded(route.health, policy, now());
      if (cookies !== undefined) session.cookies = cookies;
    },
    retire,
    blocked(session, kind) {
      const passable = kind === 'consent' || (kind === 'js_challenge' && options.open !== undefined);
      if (!passable) return retire(session);
      const route = routeOf(session);
      if (route && drop(route, session)) retired += 1;
    },
    report: (id) => {
      const route = byId.get(id);
      return route ? reportOf(route) : undefined;
    },
    routes: () => routes.map(reportOf),
    stats: () => ({
      opened,
      retired,
      proxies: routes.length,
      inFlight: routes.reduce((n, r) => n + r.inFlight, 0),
      waiting: waiters.size,
    }),
  };
};
