/**
 * How the fleet learns which routes honour a place (docs/locations.md#how-routes-are-chosen): each route's record of
 * honouring the asked place, by the place's country and level, and the rule a located search's routes follow.
 * Pure: the record is folded from the log (projections/routePlacements), the rule reads it.
 */

/** A place as routes are judged by it: its country and how fine it is. */
export type PlaceLevel = 'country' | 'region' | 'city';

export interface PlaceKey {
  country: string;
  level: PlaceLevel;
}

/**
 * The place a geotarget's canonical name stands for: its last part is its country; one part is a country, two a
 * region (a state, a province), more a city or finer ("Austin,Texas,United States").
 */
export const placeKeyOf = (canonical: string): PlaceKey => {
  const parts = canonical.split(',').map((p) => p.trim());
  const level: PlaceLevel = parts.length === 1 ? 'country' : parts.length === 2 ? 'region' : 'city';
  return { country: parts[parts.length - 1]!, level };
};

export const placeIdOf = (key: PlaceKey): string => `${key.country}|${key.level}`;

/** One route's record for one place: pages it honoured and pages judged, each older page weighing `DECAY` less. */
export interface RouteRecord {
  honoured: number;
  judged: number;
}

/**
 * How much a judged page counts against the next: 0.9, so a record is about the route's last ten pages for the
 * place. A route's record moves only when it serves the place (searches without a location are not judged), so one
 * left aside keeps its record until it is tried again.
 */
export const DECAY = 0.9;

/** rounded so the fold writes the same bytes however it is replayed (floating point is deterministic, kept short) */
const round = (n: number) => Math.round(n * 1e6) / 1e6;

/** The record after one more page judged: honoured (matched) or placed elsewhere. */
export const recordPage = (before: RouteRecord | undefined, honoured: boolean): RouteRecord => ({
  honoured: round((before?.honoured ?? 0) * DECAY + (honoured ? 1 : 0)),
  judged: round((before?.judged ?? 0) * DECAY + 1),
});

/** The chance the route honours the place: one honoured page presumed (a route never judged is trusted). */
export const honourRate = (r: RouteRecord | undefined): number => (r ? (r.honoured + 1) / (r.judged + 1) : 1);

/**
 * A route is set aside for a place under this rate, once its record weighs `MIN_JUDGED` (three pages: 1 + 0.9 + 0.81).
 */
export const MIN_HONOUR = 0.9;
export const MIN_JUDGED = 2.5;

/** One located search in `EXPLORE_EVERY` for a place is sent to a route set aside for it, so its record can recover. */
export const EXPLORE_EVERY = 20;

/**
 * The routes set aside for a place: those that placed enough of its searches elsewhere, below `MIN_HONOUR`, and below
 * the best route's rate (when every route misplaces, the best of them still serves).
 */
export const setAside = (records: Readonly<Record<string, RouteRecord>>): string[] => {
  const rates = Object.entries(records).map(([route, r]) => ({ route, r, rate: honourRate(r) }));
  const best = Math.max(0, ...rates.map((x) => x.rate));
  return rates
    .filter((x) => x.r.judged >= MIN_JUDGED && x.rate < MIN_HONOUR && x.rate < best)
    .map((x) => x.route)
    .sort();
};

/** What a located search is told about routes: those to avoid, and the one to try when it explores. */
export interface RouteAdvice {
  avoid?: string[];
  prefer?: string;
}

/**
 * The advice for the `n`-th located search of a place (from 0): avoid the routes set aside; every `EXPLORE_EVERY`-th
 * tries one of them instead, in turn.
 */
export const adviseRoutes = (records: Readonly<Record<string, RouteRecord>>, n: number): RouteAdvice => {
  const aside = setAside(records);
  if (aside.length === 0) return {};
  if (n % EXPLORE_EVERY === EXPLORE_EVERY - 1) {
    const prefer = aside[Math.floor(n / EXPLORE_EVERY) % aside.length]!;
    const avoid = aside.filter((r) => r !== prefer);
    return { prefer, ...(avoid.length ? { avoid } : {}) };
  }
  return { avoid: aside };
};
