/**
 * Location benchmark, two parts, each against its baseline in the same run over the same inputs:
 * - search: the shipped geotargets index (binary search over the sorted words of every canonical name, typo pass
 *   only when prefixes find too little) against a linear scan that applies the same match rules to every target and
 *   sorts the hits the same way;
 * - resolution: the resolver every surface uses (services/geo/resolve.ts: ids, canonical names, partial names,
 *   abbreviations, City,Country, bare names) against the one before it (an exact canonical name, else compat's "the
 *   top search hit if its canonical name begins with the query"), timed on the names both resolve; how many of the
 *   forms each resolves is printed beside it.
 * Also the index's build time and the heap it keeps (paid once at start). It asserts nothing.
 *
 *   npx tsx test/bench/locations.ts [--rounds 200]
 */
import { execFileSync } from 'node:child_process';
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
import { createLocationMatcher } from '../../services/geo/resolve.js';

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
/** What a service pays at start: the shipped index loaded in a fresh process, and the memory it keeps after a GC. */
const startCost = (): { ms: number; mb: number } => {
  const code = `import { shippedGeotargets } from ${JSON.stringify(new URL('../../services/geo/geotargets.ts', import.meta.url).pathname)};
    gc(); const m0 = process.memoryUsage(); const t0 = performance.now(); shippedGeotargets();
    const ms = performance.now() - t0; gc(); gc(); const m1 = process.memoryUsage();
    console.log(JSON.stringify({ ms, mb: (m1.heapUsed + m1.external - m0.heapUsed - m0.external) / 1e6 }));`;
  const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', code]);
  return JSON.parse(out.toString());
};
const start = startCost();
const QUERIES = ['austin', 'Austin, Texas', 'texas', 'new york', 'par', 'london', 'san fr', 'munich', 'toky', 'united'];

/**
 * the baseline: the same rules (word prefix + rest contained, ranked the same), by scanning every target. Like the
 * index, it normalises every canonical name once, before timing (the index pays that in its build), so the per-query
 * figures compare the search alone. It ranks by the descendants the index counted (the index leaves its input alone).
 */
const typeOrder = (t: Geotarget) => (t.targetType === 'Country' ? 0 : t.targetType === 'State' ? 1 : 3);
const rankOf = (a: Geotarget, b: Geotarget) =>
  b.population - a.population || typeOrder(a) - typeOrder(b) || b.descendants - a.descendants;
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
  hits.sort(rankOf);
  return hits.slice(0, limit);
};

const time = (fn: (q: string) => unknown) => {
  const start = performance.now();
  for (let r = 0; r < rounds; r++) for (const q of QUERIES) fn(q);
  return (performance.now() - start) / (rounds * QUERIES.length);
};
// alternate twice so neither side gets only the warm or only the cold half
const indexed: number[] = [];
const scanned: number[] = [];
for (let i = 0; i < 2; i++) {
  indexed.push(time((q) => index.search(q, 10)));
  scanned.push(time((q) => scan(q, 10)));
}
const ms = (xs: number[]) => Math.min(...xs);
console.log(
  `# locations: ${targets.length} targets, index built in ${buildMs.toFixed(0)} ms here; a fresh process loads the shipped index in ${start.ms.toFixed(0)} ms and keeps ${start.mb.toFixed(1)} MB (once, at start)`,
);
console.log('| search | ms per query (best of 2) | queries/s |');
console.log('|---|---|---|');
console.log(`| shipped index | ${ms(indexed).toFixed(3)} | ${Math.round(1000 / ms(indexed))} |`);
console.log(`| linear scan (baseline) | ${ms(scanned).toFixed(3)} | ${Math.round(1000 / ms(scanned))} |`);
console.log(`ratio: index ${(ms(scanned) / ms(indexed)).toFixed(1)}× faster than the scan`);

// resolution: every form of a few places, as people and clients write them
const FORMS = [
  'Austin,Texas,United States',
  'Austin, Texas, United States',
  'Austin, Texas',
  'Austin, TX',
  'Austin,United States',
  'Austin',
  '1026201',
  'London',
  'London, UK',
  'London, Ontario',
  'Paris, France',
  'Paris, TX',
  'New York,New York,United States',
  'New York, NY',
  'Germany',
  'Texas',
  'Munich, Germany',
  'Los Angeles, CA',
  'San Francisco, California',
  'Nowhere, Texas',
];
const matcher = createLocationMatcher(index);
const spaced = (name: string) => lookupKey(name);
/** the resolver before: an exact canonical name, else the top search hit when its canonical name begins with the name */
const previous = (name: string): Geotarget | undefined => {
  const exact = index.byName(name);
  if (exact) return exact;
  const top = index.search(name, 1)[0];
  return top && `${spaced(top.canonicalName)},`.startsWith(`${spaced(name)},`) ? top : undefined;
};
const bothResolve = FORMS.filter((f) => previous(f) && matcher.resolve(f));
const timeResolve = (fn: (q: string) => unknown, names: string[]) => {
  const start = performance.now();
  for (let r = 0; r < rounds; r++) for (const q of names) fn(q);
  return (performance.now() - start) / (rounds * names.length);
};
const now: number[] = [];
const before: number[] = [];
for (let i = 0; i < 2; i++) {
  now.push(timeResolve((q) => matcher.resolve(q), bothResolve));
  before.push(timeResolve(previous, bothResolve));
}
const resolvedBy = (fn: (q: string) => unknown) => FORMS.filter((f) => fn(f)).length;
console.log('');
console.log(
  `| resolve (${bothResolve.length} names both resolve) | ms per name (best of 2) | forms resolved of ${FORMS.length} |`,
);
console.log('|---|---|---|');
console.log(`| resolver (every surface) | ${ms(now).toFixed(3)} | ${resolvedBy((q) => matcher.resolve(q))} |`);
console.log(`| previous resolver (baseline) | ${ms(before).toFixed(3)} | ${resolvedBy(previous)} |`);
console.log(`ratio: resolver ${(ms(before) / ms(now)).toFixed(1)}× the previous one's speed on the names both resolve`);
