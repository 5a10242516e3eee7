import type { CrawlCost, Placement } from '../../contracts/events.js';
import { isWrongPlace } from '../../domain/location/placement.js';
import type { ProjectedEvent, Projection } from '../projection.js';
import { hourOf } from './hourlyOutcomes.js';

/** One route's hour: what the crawls that ended in it reported (docs/fleet.md). */
export interface RouteHour {
  /** the proxy's host:port (never its credentials); absent for the direct route */
  proxy?: string;
  /**
   * Google requests and blocks, by minute of the hour (`00`–`59`) of the crawl's end; with them, the pages whose
   * place was judged (`placed`) and those Google placed elsewhere (`misplaced`: not the place asked for, nor in it;
   * docs/locations.md#the-check), absent where none was judged
   */
  minutes: Record<string, { requests: number; blocked: number; placed?: number; misplaced?: number }>;
  /** how the route stood at the last report: its pace (absent with pacing off) and its cooldown */
  rpm?: number;
  coolUntil?: string;
  at: string;
}

/**
 * The routes' health per UTC hour (the dashboard's service view): each crawl's cost by route, and how the routes it
 * used stood when it ended. Counts and proxy hosts only: nothing names a key or a keyword, so retention leaves it.
 */
export interface RouteHealthDoc {
  hour: string;
  routes: Record<string, RouteHour>;
}

const reported = (e: ProjectedEvent): CrawlCost | undefined =>
  e.type === 'CrawlCompleted' || e.type === 'CrawlFailed' ? e.data.cost : undefined;

/** the pages a crawl judged, by route: how the routes placed its searches */
const placementsOf = (e: ProjectedEvent): readonly Placement[] =>
  e.type === 'CrawlCompleted' ? (e.data.locationCheck?.placements ?? []) : [];

const endOf = (e: ProjectedEvent) =>
  e.type === 'CrawlCompleted' ? e.data.completedAt : e.type === 'CrawlFailed' ? e.data.failedAt : '';

export const routeHealthProjection: Projection<RouteHealthDoc> = {
  name: 'routeHealth',
  idOf: (e) => (reported(e)?.routes.length || placementsOf(e).length ? hourOf(endOf(e)) : undefined),
  evolve(doc, e) {
    const cost = reported(e);
    const placed = placementsOf(e);
    if (!cost && placed.length === 0) return doc ?? null;
    const at = endOf(e);
    const minute = at.slice(14, 16);
    const routes = { ...(doc?.routes ?? {}) };
    for (const r of cost?.routes ?? []) {
      const before = routes[r.route];
      const m = before?.minutes[minute] ?? { requests: 0, blocked: 0 };
      // a later report wins for the route's standing; an earlier one arriving late only adds its counts
      const latest = !before || before.at <= at;
      routes[r.route] = {
        ...(r.proxy ? { proxy: r.proxy } : {}),
        minutes: {
          ...before?.minutes,
          [minute]: { ...m, requests: m.requests + r.requests, blocked: m.blocked + r.blocked },
        },
        ...(latest
          ? {
              ...(r.rpm !== undefined ? { rpm: r.rpm } : {}),
              ...(r.coolUntil ? { coolUntil: r.coolUntil } : {}),
              at,
            }
          : {
              ...(before.rpm !== undefined ? { rpm: before.rpm } : {}),
              ...(before.coolUntil ? { coolUntil: before.coolUntil } : {}),
              at: before.at,
            }),
      };
    }
    for (const p of placed) {
      const before = routes[p.route] ?? { minutes: {}, at };
      const m = before.minutes[minute] ?? { requests: 0, blocked: 0 };
      routes[p.route] = {
        ...before,
        minutes: {
          ...before.minutes,
          [minute]: {
            ...m,
            placed: (m.placed ?? 0) + 1,
            misplaced: (m.misplaced ?? 0) + (isWrongPlace(p.status) ? 1 : 0),
          },
        },
      };
    }
    return { hour: hourOf(at), routes };
  },
};
