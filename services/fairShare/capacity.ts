import type { ReadModelQueries } from '../../projections/index.js';

/** What the fleet can crawl, as the routes last reported it (docs/fleet.md#capacity-against-demand). */
export interface FleetCapacity {
  /** Google pages a minute the fleet can take now; null while no crawl has reported */
  pagesPerMinute: number | null;
  /** paced: the routes' learned rates summed; unpaced: the busiest minute of the last hour, what it has shown */
  basis: 'paced' | 'measured' | 'none';
  /** routes reported in the last hour, and those cooling down now */
  routes: number;
  cooling: number;
  /** a paced route's pace when all routes are paced, on average (requests a minute): what one more route adds */
  perRoute: number | null;
}

/**
 * The fleet's capacity from the `routeHealth` read model (a projection of what each crawl reported, so every process
 * of every mode reads the same). Paced routes (SERP_ROUTE_MAX_RPM) report the pace they are allowed now: the sum of
 * those not cooling down is what the fleet may send Google a minute. Unpaced routes have no pace: what they can do is
 * what they did, the busiest minute of the last hour. A request is a page (a session's opening costs a little more).
 */
export const fleetCapacity = (queries: ReadModelQueries, now: Date): FleetCapacity => {
  const rows = queries.dashboard.routes(now);
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
  const busiest = queries.dashboard.busiestMinute(now);
  return {
    pagesPerMinute: busiest > 0 ? busiest : null,
    basis: busiest > 0 ? 'measured' : 'none',
    routes: rows.length,
    cooling,
    perRoute: busiest > 0 ? busiest / rows.length : null,
  };
};
