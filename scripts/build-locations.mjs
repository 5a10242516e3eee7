#!/usr/bin/env node
// Builds the location data that ships with the product (data/geotargets.tsv.gz) from a Google Ads geotargets CSV
// (https://developers.google.com/google-ads/api/data/geotargets; a copy sits in ../shared/fixtures/geo/).
//   node scripts/build-locations.mjs [geotargets.csv(.gz)]
// One line per target: id, name, canonical name, parent id, country code, target type, 1 = active. Tabs never occur
// in Google's names, so no quoting. The first line says the format version and the source, so a loader can refuse a
// file it does not understand. A newer list at run time: `serp-api locations import FILE` (overrides this file).
import { createReadStream, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createGunzip, gzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = process.argv[2] ?? join(root, '..', 'shared', 'fixtures', 'geo', 'geotargets.csv.gz');
const out = join(root, 'data', 'geotargets.tsv.gz');

const csvFields = (line) => {
  const fields = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      fields.push(field);
      field = '';
    } else field += c;
  }
  fields.push(field);
  return fields;
};

const input = createReadStream(source);
const lines = createInterface({
  input: source.endsWith('.gz') ? input.pipe(createGunzip()) : input,
  crlfDelay: Infinity,
});
const rows = [];
let header;
for await (const raw of lines) {
  const line = raw.replace(/^\uFEFF/, '');
  if (!line.trim()) continue;
  const f = csvFields(line);
  if (!header) {
    header = f;
    if (f[0] !== 'Criteria ID' || f[2] !== 'Canonical Name') throw new Error(`${source}: not a geotargets CSV`);
    continue;
  }
  const [id, name, canonical, parent, country, type, status] = f;
  if (!id || !canonical || !country || /\t/.test(name + canonical + type)) continue;
  rows.push([id, name, canonical, parent ?? '', country.toUpperCase(), type ?? '', status === 'Active' ? '1' : '0']);
}
rows.sort((a, b) => Number(a[0]) - Number(b[0]));
const text = `#serp-api-geotargets\tv1\t${basename(source)}\t${rows.length}\n${rows.map((r) => r.join('\t')).join('\n')}\n`;
const gz = gzipSync(text, { level: 9 });
writeFileSync(out, gz);
console.log(`${out}: ${rows.length} targets, ${(gz.length / 1024).toFixed(0)} KiB`);
