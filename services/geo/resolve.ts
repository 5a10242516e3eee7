import { COUNTRIES } from './countries.js';
import { type Geotarget, type GeotargetIndex, lookupKey } from './geotargets.js';
import { regionNamesByAbbreviation } from './regions.js';

/**
 * A `location` as people and clients write it, to one geotarget (docs/locations.md):
 * - a Google Ads criteria id ("1026201");
 * - the canonical name in any case and spacing ("Austin, Texas, United States");
 * - the beginning of it or any of its parts in order, the first being the place's own name: "Austin, Texas",
 *   "Austin,United States" (SerpBear's City,Country), "Paris, France" ("Paris,Paris,Ile-de-France,France"), a bare
 *   "Austin";
 * - a region by its abbreviation ("Austin, TX", "Toronto, ON", "Sydney, NSW") and a country by its ISO code or a
 *   common short name ("London, UK", "Austin, TX, USA").
 * Several places match: the most populous, then the bigger kind of place (the index's order).
 */
export interface LocationMatcher {
  resolve(name: string): Geotarget | undefined;
  /** the closest places to a name that did not resolve, best first ("did you mean …") */
  suggest(name: string, limit: number): Geotarget[];
}

/** Short names a country goes by besides its ISO code and its name, in lookup-key form. */
const COUNTRY_NICKNAMES: Record<string, string[]> = {
  US: ['usa', 'u.s.', 'u.s.a.', 'united states of america', 'america'],
  GB: ['uk', 'u.k.', 'great britain', 'britain'],
  AE: ['uae'],
  KR: ['korea'],
  RU: ['russia'],
};

const countryNames = (): Map<string, string[]> => {
  const out = new Map<string, string[]>();
  for (const [code, entry] of Object.entries(COUNTRIES)) {
    out.set(code, [code.toLowerCase(), lookupKey(entry[1]), ...(COUNTRY_NICKNAMES[code] ?? [])]);
  }
  return out;
};

export const createLocationMatcher = (index: GeotargetIndex): LocationMatcher => {
  const regions = regionNamesByAbbreviation();
  const countries = countryNames();

  /** Whether the query's part means the target's canonical part (`last`: that part is the country). */
  const partMeans = (query: string, part: string, target: Geotarget, last: boolean): boolean =>
    query === part ||
    (regions.get(`${target.countryCode}|${query}`)?.includes(part) ?? false) ||
    (last && (countries.get(target.countryCode)?.includes(query) ?? false));

  /** The query's parts after the first, in order, among the target's canonical parts after the first. */
  const fits = (rest: string[], target: Geotarget): boolean => {
    const parts = lookupKey(target.canonicalName).split(',');
    let at = 1;
    for (const q of rest) {
      while (at < parts.length && !partMeans(q, parts[at]!, target, at === parts.length - 1)) at++;
      if (at >= parts.length) return false;
      at++;
    }
    return true;
  };

  const better = (a: Geotarget, b: Geotarget): number =>
    Number(b.active) - Number(a.active) ||
    b.population - a.population ||
    b.descendants - a.descendants ||
    a.canonicalName.length - b.canonicalName.length ||
    a.id - b.id;

  return {
    resolve(name) {
      const trimmed = name.trim();
      if (/^\d{1,10}$/.test(trimmed)) return index.byId(Number(trimmed));
      const exact = index.byName(trimmed);
      if (exact) return exact;
      const [first, ...rest] = lookupKey(trimmed)
        .split(',')
        .filter((p) => p !== '');
      if (!first) return undefined;
      const found = index.byFirstPart(first).filter((t) => fits(rest, t));
      return found.sort(better)[0];
    },
    suggest(name, limit) {
      const key = lookupKey(name);
      const seen = new Set<number>();
      const out: Geotarget[] = [];
      const add = (ts: Geotarget[]) => {
        for (const t of ts) {
          if (out.length >= limit) return;
          if (!seen.has(t.id)) out.push(t);
          seen.add(t.id);
        }
      };
      add(index.search(key, limit));
      // "Austin, Texass": the place's own name alone, then each word of it; "Nowhere, Texas": the other parts
      const [first = '', ...others] = key.split(',');
      for (const part of [first, ...first.split(' '), ...others]) {
        if (out.length < limit && part && part !== key) add(index.search(part, limit));
      }
      return out;
    },
  };
};
