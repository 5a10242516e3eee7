import { honourRate, type PlaceKey, placeIdOf, setAside } from '../../domain/location/routeChoice.js';
import type { DocReader } from '../projection.js';
import { type RoutePlacementsDoc, routePlacementsProjection } from './routePlacements.js';

/** One route's standing for one place, as the dashboard and /metrics show it. */
export interface RoutePlaceStanding {
  route: string;
  country: string;
  level: PlaceKey['level'];
  /** the chance it honours the place (domain/location/routeChoice.ts `honourRate`) */
  honour: number;
  /** pages judged, older ones weighing less */
  judged: number;
  /** set aside for located searches of the place (tried again one search in EXPLORE_EVERY) */
  avoided: boolean;
}

export const routePlacementsQueries = (docs: DocReader) => {
  const of = (key: PlaceKey) => docs.get<RoutePlacementsDoc>(routePlacementsProjection.name, placeIdOf(key));
  return {
    /** each route's record for the place (empty when no route served it yet) */
    records: (key: PlaceKey) => of(key)?.routes ?? {},
    /** every route's standing for every place it served, by route then place */
    standings: (): RoutePlaceStanding[] =>
      docs
        .list<RoutePlacementsDoc>(routePlacementsProjection.name)
        .flatMap((d) => {
          const aside = new Set(setAside(d.routes));
          return Object.entries(d.routes).map(([route, r]) => ({
            route,
            country: d.country,
            level: d.level,
            honour: Math.round(honourRate(r) * 1000) / 1000,
            judged: Math.round(r.judged * 100) / 100,
            avoided: aside.has(route),
          }));
        })
        .sort((a, b) =>
          a.route === b.route
            ? `${a.country}|${a.level}`.localeCompare(`${b.country}|${b.level}`)
            : a.route.localeCompare(b.route, undefined, { numeric: true }),
        ),
  };
};
