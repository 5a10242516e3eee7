import { randomBytes } from 'node:crypto';
import type { Device } from '../../contracts/search.js';
import { deviceProfile } from '../geo/devices.js';
import type { CrawlSession } from '../ports/fetcher.js';
import { CrawlAbortedError } from './errors.js';
import { sleep } from './sleep.js';

/**
 * Sessions as Crawlee's pool has them (docs/operations.md#going-live): each proxy is pinned to one live session per
 * device, because Google ties its cookies to the IP and user agent that earned them. A block retires the session and
 * puts its proxy in a cooldown that doubles with each consecutive block; a success resets it.
 */
export interface SessionPoolOptions {
  /** SERP_PROXY_URLS; empty: one direct route (no proxy) */
  proxyUrls?: readonly string[];
  /** cooldown after a proxy's first block; doubles per consecutive block (default 2,000 ms) */
  cooldownBaseMs?: number;
  /** upper bound of a cooldown (default 120,000 ms) */
  cooldownMaxMs?: number;
  /**
   * requests in flight at once on one route (proxy or direct), over every job and page (default 8): parallel pages
   * make a job fast, but a burst from one IP is what Google's rate limiter sees
   */
  maxInFlightPerRoute?: number;
  /**
   * Opens a new session and returns its cookies: the browser visits Google like a person would, so the http fetcher
   * can reuse its NID/SOCS cookies. Without it sessions start with no cookies.
   */
  open?: (session: CrawlSession, device: Device, signal?: AbortSignal) => Promise<string>;
  now?: () => number;
}

export interface SessionPool {
  /**
   * a live session for this device, waiting out cooldowns when every proxy is cooling down and for a free slot when
   * every route is at its in-flight budget; the caller must `release` it when its request is over
   */
  acquire(device: Device, signal?: AbortSignal): Promise<CrawlSession>;
  /** the request made on an acquired session is over (success, block or failure): its route slot is free again */
  release(session: CrawlSession): void;
  /** keep the cookies a fetch brought back, and count the success against the proxy's block streak */
  succeeded(session: CrawlSession, cookies?: string): void;
  /** drop the session for good and cool its proxy down */
  retire(session: CrawlSession): void;
  stats(): { opened: number; retired: number; proxies: number; inFlight: number };
}

interface Route {
  proxyUrl?: string;
  coolUntil: number;
  streak: number;
  /** requests in flight on this route (acquired, not yet released) */
  inFlight: number;
  live: Map<Device, CrawlSession>;
  /** a session being opened, shared by concurrent acquirers so one browser visit serves them all */
  opening: Map<Device, Promise<CrawlSession>>;
}

export const createSessionPool = (options: SessionPoolOptions = {}): SessionPool => {
  const now = options.now ?? Date.now;
  const base = options.cooldownBaseMs ?? 2_000;
  const max = options.cooldownMaxMs ?? 120_000;
  const budget = Math.max(1, options.maxInFlightPerRoute ?? 8);
  const proxies = options.proxyUrls?.length ? options.proxyUrls : [undefined];
  const routes: Route[] = proxies.map((proxyUrl) => ({
    proxyUrl,
    coolUntil: 0,
    streak: 0,
    inFlight: 0,
    live: new Map(),
    opening: new Map(),
  }));
  const bySession = new Map<string, Route>();
  /** the route each handed-out session counts against, kept past retirement until its requests are released */
  const slotOf = new WeakMap<CrawlSession, Route>();
  /** acquirers waiting for a route slot; release wakes them all and they race for it again */
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of waiters) w();
    waiters.clear();
  };
  /** until a slot frees, a cooldown ends (`ms`) or the signal aborts */
  const waitForSlot = (ms: number, signal?: AbortSignal): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(new CrawlAbortedError());
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        clearTimeout(timer);
        waiters.delete(done);
        reject(new CrawlAbortedError());
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  let next = 0;
  let opened = 0;
  let retired = 0;

  const openOn = (route: Route, device: Device, signal?: AbortSignal): Promise<CrawlSession> => {
    const pending = route.opening.get(device);
    if (pending) return pending;
    const session: CrawlSession = {
      id: randomBytes(8).toString('hex'),
      proxyUrl: route.proxyUrl,
      userAgent: deviceProfile(device).userAgent,
      cookies: '',
    };
    const promise = (async () => {
      if (options.open) session.cookies = await options.open(session, device, signal);
      opened += 1;
      route.live.set(device, session);
      bySession.set(session.id, route);
      return session;
    })().finally(() => route.opening.delete(device));
    route.opening.set(device, promise);
    return promise;
  };

  return {
    async acquire(device, signal) {
      for (;;) {
        if (signal?.aborted) throw new CrawlAbortedError();
        const t = now();
        // round-robin over the routes that are not cooling down spreads jobs over proxies
        for (let i = 0; i < routes.length; i++) {
          const route = routes[(next + i) % routes.length]!;
          if (route.coolUntil > t || route.inFlight >= budget) continue;
          next = (next + i + 1) % routes.length;
          route.inFlight += 1;
          try {
            const session = await (route.live.get(device) ?? openOn(route, device, signal));
            slotOf.set(session, route);
            return session;
          } catch (err) {
            route.inFlight -= 1;
            wake();
            throw err;
          }
        }
        const cooling = routes.filter((r) => r.coolUntil > t);
        if (cooling.length === routes.length) {
          await sleep(Math.max(1, Math.min(...cooling.map((r) => r.coolUntil)) - t), signal);
        } else {
          // some route is only busy: a release wakes us; a cooldown ending does too (the timer)
          const soonest = cooling.length ? Math.min(...cooling.map((r) => r.coolUntil)) - t : 60_000;
          await waitForSlot(Math.max(1, soonest), signal);
        }
      }
    },
    release(session) {
      const route = slotOf.get(session);
      if (!route || route.inFlight === 0) return;
      route.inFlight -= 1;
      wake();
    },
    succeeded(session, cookies) {
      const route = bySession.get(session.id);
      if (!route) return;
      route.streak = 0;
      if (cookies !== undefined) session.cookies = cookies;
    },
    retire(session) {
      const route = bySession.get(session.id);
      if (!route) return;
      bySession.delete(session.id);
      for (const [device, s] of route.live) if (s.id === session.id) route.live.delete(device);
      retired += 1;
      route.streak += 1;
      route.coolUntil = Math.max(route.coolUntil, now() + Math.min(max, base * 2 ** (route.streak - 1)));
    },
    stats: () => ({ opened, retired, proxies: routes.length, inFlight: routes.reduce((n, r) => n + r.inFlight, 0) }),
  };
};
