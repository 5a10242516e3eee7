import { randomBytes } from 'node:crypto';
import type { Device } from '../../contracts/search.js';
import { deviceProfile } from '../geo/devices.js';
import type { CrawlSession } from '../ports/fetcher.js';
import { CrawlAbortedError } from './errors.js';
import { sleep } from './sleep.js';

/**
 * Sessions as Crawlee's pool has them (DESIGN.md §5): each proxy is pinned to one live session per device, because
 * Google ties its cookies to the IP and user agent that earned them. A block retires the session and puts its proxy
 * in a cooldown that doubles with each consecutive block; a success resets it.
 */
export interface SessionPoolOptions {
  /** SERP_PROXY_URLS; empty: one direct route (no proxy) */
  proxyUrls?: readonly string[];
  /** cooldown after a proxy's first block; doubles per consecutive block (default 2,000 ms) */
  cooldownBaseMs?: number;
  /** upper bound of a cooldown (default 120,000 ms) */
  cooldownMaxMs?: number;
  /**
   * Opens a new session and returns its cookies: the browser visits Google like a person would, so the http fetcher
   * can reuse its NID/SOCS cookies. Without it sessions start with no cookies.
   */
  open?: (session: CrawlSession, device: Device, signal?: AbortSignal) => Promise<string>;
  now?: () => number;
}

export interface SessionPool {
  /** a live session for this device, waiting out cooldowns when every proxy is cooling down */
  acquire(device: Device, signal?: AbortSignal): Promise<CrawlSession>;
  /** keep the cookies a fetch brought back, and count the success against the proxy's block streak */
  succeeded(session: CrawlSession, cookies?: string): void;
  /** drop the session for good and cool its proxy down */
  retire(session: CrawlSession): void;
  stats(): { opened: number; retired: number; proxies: number };
}

interface Route {
  proxyUrl?: string;
  coolUntil: number;
  streak: number;
  live: Map<Device, CrawlSession>;
  /** a session being opened, shared by concurrent acquirers so one browser visit serves them all */
  opening: Map<Device, Promise<CrawlSession>>;
}

export const createSessionPool = (options: SessionPoolOptions = {}): SessionPool => {
  const now = options.now ?? Date.now;
  const base = options.cooldownBaseMs ?? 2_000;
  const max = options.cooldownMaxMs ?? 120_000;
  const proxies = options.proxyUrls?.length ? options.proxyUrls : [undefined];
  const routes: Route[] = proxies.map((proxyUrl) => ({
    proxyUrl,
    coolUntil: 0,
    streak: 0,
    live: new Map(),
    opening: new Map(),
  }));
  const bySession = new Map<string, Route>();
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
          if (route.coolUntil > t) continue;
          next = (next + i + 1) % routes.length;
          return route.live.get(device) ?? openOn(route, device, signal);
        }
        const soonest = Math.min(...routes.map((r) => r.coolUntil));
        await sleep(Math.max(1, soonest - t), signal);
      }
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
    stats: () => ({ opened, retired, proxies: routes.length }),
  };
};
