import type { LocationStatus } from '../../contracts/events.js';
import type { DetectedLocation } from '../../contracts/result.js';
import type { SearchRequest } from '../../contracts/search.js';
import { regionNamesByAbbreviation } from './regions.js';
import { decodeUule } from './uule.js';

/**
 * The location check (docs/locations.md#the-check): Google's stated place against the place a search asked for, by
 * the geotargets' canonical names and their parents ("Austin,Texas,United States" lies in "Texas,United States",
 * which lies in "United States"). Pure: the geotargets come in through `PlaceLookup`.
 */
export interface PlaceLookup {
  /** a place as people write it (services/geo/resolve.ts), or undefined when it is none the geotargets know */
  resolve(name: string): { canonicalName: string; countryCode: string } | undefined;
}

/** The place a search asked for, or why it names none that can be compared. */
export type AskedPlace = { place: string; countryCode: string } | { unnamed: string };

export interface Judgement {
  status: LocationStatus;
  /** the geotarget asked for */
  requested?: string;
  /** the geotarget Google's line was read as */
  detectedPlace?: string;
  /** why unverified, or where Google placed it instead */
  reason?: string;
}

export { isWrongPlace } from '../../domain/location/placement.js';

/**
 * What the request asked for: its location's geotarget, or the place a `w+` uule names. Coordinates (`lat`/`lon`, an
 * `a+` uule) and a uule that names no place cannot be compared by name; neither can a request without a location.
 */
export const askedPlace = (
  request: { uule?: string; lat?: number },
  location: string | undefined,
  lookup: PlaceLookup,
): AskedPlace => {
  const uule = request.uule ? decodeUule(request.uule) : undefined;
  const name = location ?? (uule?.form === 'name' ? uule.name : undefined);
  if (name) {
    const found = lookup.resolve(name);
    if (found) return { place: found.canonicalName, countryCode: found.countryCode };
    return { unnamed: `the uule names ${JSON.stringify(name)}, a place the geotargets do not know` };
  }
  if (uule?.form === 'point' || request.lat !== undefined) {
    return { unnamed: 'the search was asked for by coordinates, which no geotarget carries' };
  }
  if (uule) return { unnamed: 'the uule names no place (a place id)' };
  return { unnamed: 'no location was asked for' };
};

/** Case, accents and spacing aside: "São Paulo" and "sao  paulo" are one name. */
const unaccented = (s: string): string => s.normalize('NFD').replace(/\p{M}/gu, '');
const norm = (s: string): string => unaccented(s).toLowerCase().replace(/\s+/g, ' ').trim();

/** A part of Google's line that is a postal code ("94301", "109012", "28046", "100-0001"). */
const POSTAL = /^[\d\s-]+$/;

/** The line's parts: "94301, Palo Alto, CA" → Palo Alto, CA; Japanese writes 、 between them. */
const partsOf = (name: string): string[] =>
  name
    .split(/[,、，]/)
    .map((p) => p.trim())
    .filter((p) => p !== '' && !POSTAL.test(p));

let abbreviations: Map<string, string[]> | undefined;
/** Whether `written` names `part` of a place in `countryCode`: the same name, or the region's abbreviation. */
const names = (written: string, part: string, countryCode: string): boolean => {
  const w = norm(written);
  const p = norm(part);
  if (w === p) return true;
  abbreviations ??= regionNamesByAbbreviation();
  return abbreviations.get(`${countryCode}|${w}`)?.some((n) => norm(n) === p) ?? false;
};

/**
 * Which of the asked place and its parents the line's parts name, by position in the canonical name (0: the place
 * itself), or -1: the first part is that place's own name, each later part one of its later parts, in order.
 */
const namedLevel = (parts: string[], canonical: string[], countryCode: string): number => {
  for (let level = 0; level < canonical.length; level++) {
    if (!names(parts[0]!, canonical[level]!, countryCode)) continue;
    let at = level + 1;
    let fits = true;
    for (const q of parts.slice(1)) {
      while (at < canonical.length && !names(q, canonical[at]!, countryCode)) at++;
      if (at >= canonical.length) {
        fits = false;
        break;
      }
      at++;
    }
    if (fits) return level;
  }
  return -1;
};

type Relation = 'same' | 'inside' | 'parent' | 'elsewhere';
/** Where `found` lies against `asked`, by canonical names: "Austin,Texas,United States" is inside "Texas,…". */
const relation = (found: string, asked: string): Relation => {
  const f = norm(found);
  const a = norm(asked);
  if (f === a) return 'same';
  if (f.endsWith(`,${a}`)) return 'inside';
  if (a.endsWith(`,${f}`)) return 'parent';
  return 'elsewhere';
};

const byLevel = (level: number, depth: number): LocationStatus =>
  level === 0 ? 'matched' : level === depth - 1 ? 'country_only' : 'region_only';

const parentStatus = (found: string): LocationStatus => (found.includes(',') ? 'region_only' : 'country_only');

/**
 * Google's line against the place asked for. In order: the line names the asked place or one of its parents as the
 * geotargets write them (abbreviations of regions included); its part after the first names them (the line's place
 * lies inside: "Lower Manhattan, New York, NY" for New York); the line is a geotarget, read first in the asked
 * place's country and then anywhere; the place it lies in is one; its first part is the asked place's own name and
 * the rest is in another language. A bare name found only abroad ("Alger" is Alger, Ohio to the geotargets, and
 * Algiers in French) proves nothing; nor does a line the geotargets cannot read.
 */
export const judgeLocation = (
  asked: AskedPlace,
  detected: DetectedLocation | undefined,
  lookup: PlaceLookup,
): Judgement => {
  if ('unnamed' in asked) return { status: 'unverified', reason: asked.unnamed };
  const requested = asked.place;
  if (!detected) return { status: 'unverified', requested, reason: 'the page does not say where Google placed it' };
  const parts = partsOf(detected.name);
  if (parts.length === 0) return { status: 'unverified', requested, reason: 'the page names no place' };
  const canonical = requested.split(',');
  // Google writes "São Paulo"; the geotargets mostly "Sao Paulo"
  const resolve = (name: string) => lookup.resolve(name) ?? lookup.resolve(unaccented(name));
  const country = canonical[canonical.length - 1]!;

  const level = namedLevel(parts, canonical, asked.countryCode);
  if (level >= 0) {
    return { status: byLevel(level, canonical.length), requested, detectedPlace: canonical.slice(level).join(',') };
  }
  if (parts.length > 1 && namedLevel(parts.slice(1), canonical, asked.countryCode) === 0) {
    return { status: 'matched', requested, detectedPlace: requested };
  }

  /** the line as a geotarget: in the asked place's country first; elsewhere only when more than a bare name */
  const place = (p: string[]): { canonicalName: string; strong: boolean } | undefined => {
    const joined = p.join(', ');
    const inCountry = norm(p[p.length - 1]!) === norm(country) ? undefined : resolve(`${joined}, ${country}`);
    if (inCountry) return { canonicalName: inCountry.canonicalName, strong: true };
    const anywhere = resolve(joined);
    if (!anywhere) return undefined;
    // a country or a first-level region is known by its bare name; a bare city name abroad is too often another's
    return {
      canonicalName: anywhere.canonicalName,
      strong: p.length > 1 || anywhere.canonicalName.split(',').length <= 2,
    };
  };

  const found = place(parts);
  if (found) {
    const r = relation(found.canonicalName, requested);
    const detectedPlace = found.canonicalName;
    if (r === 'same' || r === 'inside') return { status: 'matched', requested, detectedPlace };
    if (r === 'parent') return { status: parentStatus(found.canonicalName), requested, detectedPlace };
    if (found.strong) {
      return { status: 'mismatched', requested, detectedPlace, reason: `Google placed it in ${detected.name}` };
    }
    return {
      status: 'unverified',
      requested,
      reason: `Google names ${JSON.stringify(detected.name)}, which the geotargets know only as ${found.canonicalName}: perhaps a name in another language`,
    };
  }
  // the place the line's place lies in: "Hussein Dey, Alger" → what "Alger" is, in the asked country first
  const around = parts.length > 1 ? place(parts.slice(1)) : undefined;
  if (around?.strong) {
    const r = relation(around.canonicalName, requested);
    if (r === 'same' || r === 'inside') return { status: 'matched', requested, detectedPlace: around.canonicalName };
    if (r === 'elsewhere') {
      return {
        status: 'mismatched',
        requested,
        detectedPlace: around.canonicalName,
        reason: `Google placed it in ${detected.name}`,
      };
    }
  }
  // the asked place's own name, the rest in the interface language ("Los Angeles, Kalifornija, …")
  if (!around && names(parts[0]!, canonical[0]!, asked.countryCode)) {
    return { status: 'matched', requested, detectedPlace: requested };
  }
  return {
    status: 'unverified',
    requested,
    reason: `Google names ${JSON.stringify(detected.name)}, which is no place the geotargets know`,
  };
};

/**
 * One page's stated place against what its search asked for, judged where the geotargets are: in this thread, or the
 * HTTP thread's for the pipeline thread (services/threads/pipelineThread.ts). `location` is the geotarget the
 * request's location resolved to.
 */
export type LocationJudge = (
  request: SearchRequest,
  location: string | undefined,
  detected: DetectedLocation | undefined,
) => Judgement | Promise<Judgement>;

/** The judge over one place lookup (the process's location resolver). */
export const judgeWith =
  (lookup: PlaceLookup): LocationJudge =>
  (request, location, detected) =>
    judgeLocation(askedPlace(request, location, lookup), detected, lookup);
