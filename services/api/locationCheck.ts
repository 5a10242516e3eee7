import { decodeUule } from '../geo/uule.js';

/**
 * The location check every surface shares (/v1, compat, and through /v1 the MCP tools and the CLI): one resolver,
 * and for a location it cannot place, the closest places it knows. See docs/locations.md.
 */
export interface LocationLookup {
  /** undefined when the location is unknown */
  resolve(name: string): unknown;
  /** the closest places' canonical names, best first */
  suggest?(name: string, limit: number): string[];
}

/** "did you mean …" for a location that did not resolve, or '' when nothing comes close. */
export const didYouMean = (location: string, lookup: LocationLookup | undefined): string => {
  const near = lookup?.suggest?.(location, 3) ?? [];
  return near.length ? ` Did you mean ${near.map((n) => JSON.stringify(n)).join(', ')}?` : '';
};

/** What /v1 answers with its 422: what was not understood, what comes close, and the forms that work. */
export const unknownLocationDetail = (location: string, lookup: LocationLookup | undefined): string =>
  `unknown location ${JSON.stringify(location.slice(0, 120))}.${didYouMean(location, lookup)} A location is a place ` +
  'as people write it ("Austin, Texas", "Austin, TX", "Austin,United States", "Austin"), a canonical name ' +
  '("Austin,Texas,United States") or a Google criteria id ("1026201"); GET /locations.json?q=… lists them.';

/**
 * The limits an `a+` uule's position is held to: the same as the `lat`, `lon` and `radius` fields
 * (docs/locations.md#what-location-accepts), since Google receives the position either way.
 */
const POINT_LIMITS = [
  { key: 'lat', name: 'latitude', min: -90, max: 90, unit: '°' },
  { key: 'lon', name: 'longitude', min: -180, max: 180, unit: '°' },
  { key: 'radius', name: 'radius', min: 0, max: 1_000_000, unit: ' m' },
] as const;

const pointOutOfRange = (point: { lat: number; lon: number; radius?: number }): string | undefined => {
  for (const limit of POINT_LIMITS) {
    const value = point[limit.key];
    if (value === undefined) continue;
    const tooLow = limit.key === 'radius' ? value <= limit.min : value < limit.min;
    if (tooLow || value > limit.max || !Number.isFinite(value)) {
      const range =
        limit.key === 'radius' ? `above 0 and at most ${limit.max}` : `between ${limit.min} and ${limit.max}`;
      return (
        `uule: its ${limit.name} is ${value}${limit.unit}, and must be ${range}${limit.unit} (the limits of the ` +
        `\`${limit.key}\` field)`
      );
    }
  }
  return undefined;
};

/**
 * Why a `uule` cannot be sent, or undefined when it reads back (docs/locations.md#what-location-accepts): Google
 * ignores one it cannot decode and places the search by the proxy's address, so it is refused before a job exists;
 * an `a+` position outside the coordinates' limits is refused as the `lat`/`lon`/`radius` fields would be.
 */
export const invalidUuleDetail = (uule: string): string | undefined => {
  const decoded = decodeUule(uule);
  if (decoded?.form === 'point') return pointOutOfRange(decoded);
  return decoded
    ? undefined
    : `uule ${JSON.stringify(uule.slice(0, 60))} does not decode: a uule is "w+" and the base64 of a place's ` +
        'canonical name ("w+CAIQICIaQXVzdGluLFRleGFzLFVuaXRlZCBTdGF0ZXM" is Austin,Texas,United States), or "a+" and ' +
        'the base64 of a position. Send `location` instead ("Austin, Texas"), or `lat` and `lon`.';
};
