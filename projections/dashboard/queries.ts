import type { DocReader } from '../projection.js';
import { type HourlyOutcomesDoc, hourlyOutcomesProjection, hourOf } from './hourlyOutcomes.js';
import { type KeyDailyDoc, keyDailyProjection } from './keyDaily.js';
import { type RouteHealthDoc, routeHealthProjection } from './routeHealth.js';

/** A route as the dashboard's service view shows it: the last hour's requests and blocks, its last standing. */
export interface RouteHealthRow {
  route: string;
  proxy?: string;
  requests: number;
  blocked: number;
  /** pages whose place was judged, and of those the ones Google placed elsewhere (docs/locations.md#the-check) */
  placed: number;
  misplaced: number;
  rpm?: number;
  coolUntil?: string;
  reportedAt: string;
}

export const dashboardQueries = (docs: DocReader) => ({
  /** the key's last `days` UTC days up to `now`, every day present (zeros where it made no search) */
  keyDays(keyId: string, days: number, now: Date): KeyDailyDoc[] {
    const byDay = new Map(
      docs.listByLookup<KeyDailyDoc>(keyDailyProjection.name, keyId, { last: days }).map((d) => [d.day, d]),
    );
    return Array.from({ length: days }, (_, i) => {
      const day = new Date(now.getTime() - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10);
      return byDay.get(day) ?? { keyId, day, searches: 0, cached: 0, reserved: 0, released: 0 };
    });
  },
  /**
   * every route a crawl reported in the hour up to `now`: requests and blocks of crawls that ended in it, and how the
   * route stood at its last report (docs/fleet.md), by route name
   */
  routes(now: Date): RouteHealthRow[] {
    const since = new Date(now.getTime() - 3_600_000).toISOString();
    const hourDocs = [hourOf(since), hourOf(now.toISOString())]
      .filter((h, i, all) => all.indexOf(h) === i)
      .map((h) => docs.get<RouteHealthDoc>(routeHealthProjection.name, h))
      .filter((d): d is RouteHealthDoc => d !== undefined);
    const rows = new Map<string, RouteHealthRow>();
    for (const doc of hourDocs) {
      for (const [route, r] of Object.entries(doc.routes)) {
        const row = rows.get(route) ?? { route, requests: 0, blocked: 0, placed: 0, misplaced: 0, reportedAt: '' };
        for (const [minute, m] of Object.entries(r.minutes)) {
          if (`${doc.hour}:${minute}` <= since.slice(0, 16)) continue;
          row.requests += m.requests;
          row.blocked += m.blocked;
          row.placed += m.placed ?? 0;
          row.misplaced += m.misplaced ?? 0;
        }
        if (r.at > row.reportedAt && r.at > since) {
          row.reportedAt = r.at;
          if (r.proxy) row.proxy = r.proxy;
          if (r.rpm !== undefined) row.rpm = r.rpm;
          else delete row.rpm;
          if (r.coolUntil) row.coolUntil = r.coolUntil;
          else delete row.coolUntil;
        }
        rows.set(route, row);
      }
    }
    return [...rows.values()]
      .filter((r) => r.reportedAt !== '')
      .sort((a, b) => a.route.localeCompare(b.route, 'en', { numeric: true }));
  },
  /**
   * the most Google requests every route together reported in one minute of the hour up to `now` (by the minute its
   * crawl ended): what an unpaced fleet has shown it can do (services/fairShare/capacity.ts)
   */
  busiestMinute(now: Date): number {
    const since = new Date(now.getTime() - 3_600_000).toISOString().slice(0, 16);
    const byMinute = new Map<string, number>();
    for (const h of [hourOf(since), hourOf(now.toISOString())].filter((h, i, all) => all.indexOf(h) === i)) {
      const doc = docs.get<RouteHealthDoc>(routeHealthProjection.name, h);
      for (const r of Object.values(doc?.routes ?? {})) {
        for (const [minute, m] of Object.entries(r.minutes)) {
          const at = `${h}:${minute}`;
          if (at <= since) continue;
          byMinute.set(at, (byMinute.get(at) ?? 0) + m.requests);
        }
      }
    }
    return Math.max(0, ...byMinute.values());
  },
  /** the service's last `hours` UTC hours up to `now`, every hour present */
  hours(hours: number, now: Date): HourlyOutcomesDoc[] {
    const before = hourOf(new Date(now.getTime() - hours * 3_600_000).toISOString());
    const byHour = new Map(
      docs.listBetween<HourlyOutcomesDoc>(hourlyOutcomesProjection.name, before, '~', hours).map((d) => [d.hour, d]),
    );
    return Array.from({ length: hours }, (_, i) => {
      const hour = hourOf(new Date(now.getTime() - (hours - 1 - i) * 3_600_000).toISOString());
      return byHour.get(hour) ?? { hour, submitted: 0, cached: 0, done: 0, partial: 0, failed: {} };
    });
  },
});
