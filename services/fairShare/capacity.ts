import type { RouteHealthRow } from '../../projections/dashboard/queries.js';
import type { ReadModelQueries } from '../../projections/index.js';

/**
 * The routes the running fleet has (docs/fleet.md#capacity-against-demand): the routes this process is configured
 * with (SERP_PROXY_URLS, named as the crawler names them: proxy-N by its place, or direct without proxies), and the
 * moment it started. The `routeHealth` read model keeps every route a crawl reported in the last hour, those of a run
 * before a restart too; a route counts only when this fleet has it, or when a crawl reported it since this process
 * started (a crawler of the cluster configured otherwise).
 */
export interface RunningFleet {
  routes: ReadonlyArray<{ route: string; proxy?: string }>;
  since: string;
}

const proxyHost = (proxyUrl: string): string => {
  try {
    return new URL(proxyUrl).host;
  } catch {
    return 'unparsable proxy URL';
  }
};

/** the fleet of a process configured with `proxyUrls`, started at `since` */
export const runningFleet = (proxyUrls: readonly string[], since: Date = new Date()): RunningFleet => ({
  routes: proxyUrls.length
    ? proxyUrls.map((u, i) => ({ route: `proxy-${i + 1}`, proxy: proxyHost(u) }))
    : [{ route: 'direct' }],
  since: since.toISOString(),
});

/** the reported routes the running fleet still has (all of them when the fleet is not known) */
export const currentRoutes = <R extends Pick<RouteHealthRow, 'route' | 'proxy' | 'reportedAt'>>(
  rows: R[],
  fleet: RunningFleet | undefined,
): R[] =>
  fleet
    ? rows.filter(
        (r) => r.reportedAt >= fleet.since || fleet.routes.some((c) => c.route === r.route && c.proxy === r.proxy),
      )
    : rows;

/** What the fleet can crawl, as the routes last reported it (docs/fleet.md#capacity-against-demand). */
export interface FleetCapacity {
  /** Google pages a minute the fleet can take now; null while no crawl has reported */
  pagesPerMinute: number | null;
  /** paced: the routes' learned rates summed; unpaced: the busiest minute of the last hour, what it has shown */
  basis: 'paced' | 'measured' | 'none';
  /** routes reported in the last hour that the running fleet has (when known), and those cooling down now */
  routes: number;
  cooling: number;
  /** a paced route's pace when all routes are paced, on average (requests a minute): what one more route adds */
  perRoute: number | null;
}

/**
 * The fleet's capacity from the `routeHealth` read model (a projection of what each crawl reported, so every process
 * of every mode reads the same). Paced routes (SERP_ROUTE_MAX_RPM) report the pace they are allowed now: the sum of
 * those not cooling down is what the fleet may send Google a minute. Unpaced routes have no pace: what they can do is
 * what they did, the busiest minute of the last hour, less the share of the hour's requests carried by routes the
 * running fleet no longer has. A request is a page (a session's opening costs a little more). Without `fleet`, every
 * route reported in the hour counts.
 */
export const fleetCapacity = (queries: ReadModelQueries, now: Date, fleet?: RunningFleet): FleetCapacity => {
  const all = queries.dashboard.routes(now);
  const rows = currentRoutes(all, fleet);
  if (rows.length === 0) return { pagesPerMinute: null, basis: 'none', routes: 0, cooling: 0, perRoute: null };
  const t = now.getTime();
  const cooling = rows.filter((r) => r.coolUntil !== undefined && Date.parse(r.coolUntil) > t).length;
  const paced = rows.filter((r) => r.rpm !== undefined);
  if (paced.length > 0) {
    const open = paced.filter((r) => !(r.coolUntil !== undefined && Date.parse(r.coolUntil) > t));
    const sum = open.reduce((n, r) => n + (r.rpm ?? 0), 0);
    return {
      pagesPerMinute: sum,
      basis: 'paced',
      routes: rows.length,
      cooling,
      perRoute: paced.reduce((n, r) => n + (r.rpm ?? 0), 0) / paced.length,
    };
  }
  // the busiest minute counts every route of the hour: routes the fleet no longer has take their share of it away
  const requests = (rs: RouteHealthRow[]) => rs.reduce((n, r) => n + r.requests, 0);
  const share = rows.length === all.length ? 1 : requests(rows) / Math.max(1, requests(all));
  const busiest = Math.round(queries.dashboard.busiestMinute(now) * share * 10) / 10;
  return {
    pagesPerMinute: busiest > 0 ? busiest : null,
    basis: busiest > 0 ? 'measured' : 'none',
    routes: rows.length,
    cooling,
    perRoute: busiest > 0 ? busiest / rows.length : null,
  };
};
