import type { CrawlCost, RouteCost } from '../../contracts/events.js';
import type { OpenCost, SessionPool } from './sessions.js';

/**
 * One crawl's cost in Google requests (docs/fleet.md), counted as its pages are fetched: what each fetch and each
 * session opening it caused made, by route, and how the routes it used stood when it ended.
 */
export interface CostMeter {
  /** a fetch on `route` is over: the requests it made (redirects, reloads), what they weighed, whether a block */
  fetched(a: { route?: string; fetcher: string; requests: number; bytes: number; blocked: boolean }): void;
  /** a session opened for this crawl (the browser's visit to the home page) */
  opened: OpenCost;
  cost(sessions: Pick<SessionPool, 'report'>): CrawlCost;
}

export const createCostMeter = (): CostMeter => {
  let requests = 0;
  let blocked = 0;
  let browserPages = 0;
  let bytes = 0;
  const routes = new Map<string, { requests: number; blocked: number }>();
  const on = (route: string | undefined) => {
    const id = route ?? 'direct';
    let r = routes.get(id);
    if (!r) {
      r = { requests: 0, blocked: 0 };
      routes.set(id, r);
    }
    return r;
  };
  return {
    fetched(a) {
      const r = on(a.route);
      r.requests += a.requests;
      requests += a.requests;
      bytes += a.bytes;
      if (a.fetcher === 'browser') browserPages += a.requests;
      if (a.blocked) {
        r.blocked += 1;
        blocked += 1;
      }
    },
    opened(c) {
      on(c.route).requests += c.requests;
      requests += c.requests;
      browserPages += c.requests;
      bytes += c.bytes;
    },
    cost(sessions) {
      const used: RouteCost[] = [...routes].map(([route, r]) => {
        const now = sessions.report(route);
        return {
          route,
          ...(now?.proxy ? { proxy: now.proxy } : {}),
          requests: r.requests,
          blocked: r.blocked,
          ...(now?.rpm !== undefined ? { rpm: now.rpm } : {}),
          ...(now?.coolUntil !== undefined ? { coolUntil: new Date(now.coolUntil).toISOString() } : {}),
        };
      });
      return { requests, blocked, browserPages, bytes, routes: used };
    },
  };
};
