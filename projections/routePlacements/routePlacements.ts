import { isWrongPlace } from '../../domain/location/placement.js';
import {
  type PlaceLevel,
  placeIdOf,
  placeKeyOf,
  type RouteRecord,
  recordPage,
} from '../../domain/location/routeChoice.js';
import type { ProjectedEvent, Projection } from '../projection.js';

/**
 * Each place's record of the routes that served it (docs/locations.md#how-routes-are-chosen): one document per
 * country and place level, each route's pages honoured against those judged, older pages weighing less
 * (domain/location/routeChoice.ts). Folded from the placements every `CrawlCompleted` carries; pages Google did not
 * place (`unverified`) say nothing about a route and are left out. Names routes and countries only.
 */
export interface RoutePlacementsDoc {
  country: string;
  level: PlaceLevel;
  routes: Record<string, RouteRecord>;
  at: string;
}

const requestedOf = (e: ProjectedEvent): string | undefined =>
  e.type === 'CrawlCompleted' && e.data.locationCheck?.requested && e.data.locationCheck.placements.length
    ? e.data.locationCheck.requested
    : undefined;

export const routePlacementsProjection: Projection<RoutePlacementsDoc> = {
  name: 'routePlacements',
  idOf: (e) => {
    const requested = requestedOf(e);
    return requested ? placeIdOf(placeKeyOf(requested)) : undefined;
  },
  evolve(doc, e) {
    const requested = requestedOf(e);
    if (!requested || e.type !== 'CrawlCompleted') return doc ?? null;
    const key = placeKeyOf(requested);
    const routes = { ...(doc?.routes ?? {}) };
    let judged = false;
    for (const p of e.data.locationCheck?.placements ?? []) {
      if (p.status !== 'matched' && !isWrongPlace(p.status)) continue;
      routes[p.route] = recordPage(routes[p.route], p.status === 'matched');
      judged = true;
    }
    if (!judged) return doc ?? null;
    return { country: key.country, level: key.level, routes, at: e.data.completedAt };
  },
};
