/**
 * Location search benchmark: the shipped geotargets index (binary search over the sorted words of every canonical
 * name, typo pass only when prefixes find too little) against a linear scan that applies the same match rules to
 * every target and sorts the hits the same way, in the same run, over the same queries. Also the index's build time
 * (paid once at start), in two rounds with the first side alternated (compare.ts). It asserts nothing.
 *
 *   npx tsx test/bench/locations.ts [--rounds 200]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import {
  type Geotarget,
  indexGeotargets,
  lookupKey,
  parseGeotargets,
  shippedGeotargetsPath,
} from '../../services/geo/geotargets.js';
import { alternate, printRatio } from './compare.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '200' } } });
const rounds = Number(values.rounds);
const path = shippedGeotargetsPath();
if (!path) {
  console.log('# locations: skipped, data/geotargets.tsv.gz is missing');
  process.exit(0);
}
const text = gunzipSync(readFileSync(path)).toString('utf8');
const t0 = performance.now();
const targets = parseGeotargets(text);
const index = indexGeotargets(targets);
const buildMs = performance.now() - t0;
const QUERIES = ['austin', 'Austin, Texas', 'texas', 'new york', 'par', 'london', 'san fr', 'munich', 'toky', 'united'];

/**
 * the baseline: the same rules (word prefix + rest contained, ranked the same), by scanning every target. Like the
 * index, it normalises every canonical name once, before timing (the index pays that in its build), so the per-query
 * figures compare the search alone. It ranks by the descendants the index counted (the index leaves its input alone).
 */
const typeOrder = (t: Geotarget) => (t.targetType === 'Country' ? 0 : t.targetType === 'State' ? 1 : 3);
const normalised = targets.map((t) => {
  t.descendants = index.byId(t.id)!.descendants;
  const key = lookupKey(t.canonicalName);
  return { t, words: key.split(/[ ,]+/), spaced: key.replace(/,/g, ' ') };
});
const scan = (query: string, limit: number) => {
  const key = lookupKey(query);
  const [first = '', ...rest] = key.split(/[ ,]+/).filter(Boolean);
  const restKey = rest.join(' ');
  const hits: Geotarget[] = [];
  for (const { t, words, spaced } of normalised) {
    if (!words.some((w) => w.startsWith(first))) continue;
    if (restKey && !spaced.includes(restKey)) continue;
    hits.push(t);
  }
  hits.sort((a, b) => typeOrder(a) - typeOrder(b) || b.descendants - a.descendants);
  return hits.slice(0, limit);
};

const time = (fn: (q: string) => unknown) => {
  const start = performance.now();
  for (let r = 0; r < rounds; r++) for (const q of QUERIES) fn(q);
  return (performance.now() - start) / (rounds * QUERIES.length);
};
// two rounds, the first side alternated, so neither gets only the warm or only the cold half
const sides = await alternate(2, {
  indexed: async () => time((q) => index.search(q, 10)),
  scanned: async () => time((q) => scan(q, 10)),
});
const [indexed, scanned] = [sides.indexed, sides.scanned];
const ms = (xs: number[]) => Math.min(...xs);
console.log(`# locations: ${targets.length} targets, index built in ${buildMs.toFixed(0)} ms (once, at start)`);
console.log('| search | ms per query (best of 2) | queries/s |');
console.log('|---|---|---|');
console.log(`| shipped index | ${ms(indexed).toFixed(3)} | ${Math.round(1000 / ms(indexed))} |`);
console.log(`| linear scan (baseline) | ${ms(scanned).toFixed(3)} | ${Math.round(1000 / ms(scanned))} |`);
// pure CPU over the same queries: nothing here can fail without throwing
printRatio(
  'ratio, scan time / index time (the index is this many times faster)',
  { value: ms(scanned), failures: 0 },
  {
    value: ms(indexed),
    failures: 0,
  },
);
