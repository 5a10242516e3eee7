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

/**
 * A crawl that ended `partial` because Google still placed it elsewhere after its retry: it gives its quota back, as a
 * failed one does, and no surface answers it as a success (docs/locations.md#what-each-surface-answers).
 */
export const endedElsewhere = (e: { type: string; data: unknown }): boolean => {
  if (e.type !== 'CrawlCompleted') return false;
  const d = e.data as { status: string; locationCheck?: LocationCheck };
  return d.status === 'partial' && isWrongPlace(d.locationCheck?.status);
};

/**
 * The one sentence every surface gives for a search still placed elsewhere after its retry (compat's `error`, the MCP
 * tool's failure, the webhook's `detail`; docs/locations.md#what-each-surface-answers): where Google placed it and
 * where it was asked.
 */
export const misplacedSentence = (check: { status: LocationStatus; requested?: string; detected?: string }): string => {
  const placed = check.detected
    ? `in ${JSON.stringify(check.detected)}`
    : check.status === 'country_only'
      ? 'in its country only'
      : check.status === 'region_only'
        ? 'in its region only'
        : 'elsewhere';
  const asked = check.requested ? JSON.stringify(check.requested) : 'the place asked for';
  return (
    `Google placed this search ${placed}, not in ${asked}, also when it was fetched again on another route: its ` +
    'results are not from the place asked for and are not served as a success. Its pages stay readable through ' +
    'raw_html_file and on /v1 (status partial); the search is not charged.'
  );
};
