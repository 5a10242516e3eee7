import { createRequire } from 'node:module';

/** A state or province with its abbreviation ("TX" Texas, US), from the `provinces` package. */
export interface RegionAbbreviation {
  short: string;
  name: string;
  country: string;
  alt?: string[];
}

const require = createRequire(import.meta.url);

/**
 * Every region the `provinces` list abbreviates (US states and territories, Canadian provinces, and the states of
 * Australia, Mexico, India, Brazil, Germany and a few more): what `Austin, TX` and `Toronto, ON` are written with.
 */
export const REGION_ABBREVIATIONS: readonly RegionAbbreviation[] = (
  require('provinces') as Array<Partial<RegionAbbreviation>>
).filter((r): r is RegionAbbreviation => Boolean(r.short && r.name && r.country));

/** `country|abbreviation` (lower case) → the region's names (lower case), for the resolver. */
export const regionNamesByAbbreviation = (): Map<string, string[]> => {
  const out = new Map<string, string[]>();
  for (const r of REGION_ABBREVIATIONS) {
    const key = `${r.country}|${r.short.toLowerCase()}`;
    out.set(key, [...(out.get(key) ?? []), r.name.toLowerCase(), ...(r.alt ?? []).map((a) => a.toLowerCase())]);
  }
  return out;
};
