import type { LocationCheck, LocationStatus } from '../../contracts/events.js';

/**
 * Verdicts that say Google did not search from the place asked for (docs/locations.md#the-check): elsewhere, or only
 * the asked place's region or country. A page so placed is fetched again on another route; a search still so placed
 * after it is `partial` with a `location_mismatch` note, and never a monitor's position.
 */
const WRONG = new Set<LocationStatus>(['mismatched', 'region_only', 'country_only']);

export const isWrongPlace = (status: LocationStatus | undefined): boolean => status !== undefined && WRONG.has(status);

/** The route whose page ended a search placed elsewhere: the last one judged, the retry's. */
export const misplacedOn = (check: LocationCheck | undefined): string | undefined =>
  check && isWrongPlace(check.status) ? check.placements.findLast((p) => isWrongPlace(p.status))?.route : undefined;
