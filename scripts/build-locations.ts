/**
 * Builds the location data that ships with the product (data/geotargets.tsv.gz) from a Google Ads geotargets CSV
 * (https://developers.google.com/google-ads/api/data/geotargets; a copy sits in ../shared/fixtures/geo/).
 *   npx tsx scripts/build-locations.ts [geotargets.csv(.gz)]
 * One line per target: id, name, canonical name, parent id, country code, target type, 1 = active. Tabs never occur
 * in Google's names, so no quoting. The first line says the format version and the source, so a loader can refuse a
 * file it does not understand. A newer list at run time: `serp-api locations import FILE` (overrides this file).
 */
import { writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { readGeotargetsCsv } from '../services/geo/locations.js';

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
const text = `#serp-api-geotargets\tv1\t${basename(source)}\t${rows.length}\n${rows.map((r) => r.join('\t')).join('\n')}\n`;
const gz = gzipSync(text, { level: 9 });
writeFileSync(out, gz);
console.log(`${out}: ${rows.length} targets, ${(gz.length / 1024).toFixed(0)} KiB`);
