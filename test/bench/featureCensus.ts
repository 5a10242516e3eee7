/**
 * Which features the parser finds on every fixture page, to diff a parser change over the whole corpus:
 * `npx tsx test/bench/featureCensus.ts --write before.json`, change the parser, then
 * `npx tsx test/bench/featureCensus.ts --diff before.json` prints each page's gained (+), lost (-) and recounted (~)
 * features. Without options it prints per feature how many pages carry it. Reports only; the pins are in
 * test/parser/featureCensus.test.ts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type Census, censusOfCorpus, diffCensus } from '../parser/census.js';
import { fixturesMissing } from '../support/fixtures.js';

const { values } = parseArgs({ options: { write: { type: 'string' }, diff: { type: 'string' } } });
const missing = fixturesMissing();
if (missing) process.exit(0);

const census = censusOfCorpus();
if (values.write) {
  writeFileSync(values.write, `${JSON.stringify(census, null, 1)}\n`);
  console.log(`wrote ${Object.keys(census).length} pages to ${values.write}`);
} else if (values.diff) {
  const before = JSON.parse(readFileSync(values.diff, 'utf8')) as Census;
  const lines = diffCensus(before, census);
  for (const line of lines) console.log(line);
  console.log(`${lines.length} differences over ${Object.keys(census).length} pages`);
} else {
  const pagesPer: Record<string, number> = {};
  for (const counts of Object.values(census))
    for (const name of Object.keys(counts)) pagesPer[name] = (pagesPer[name] ?? 0) + 1;
  console.log('| feature | pages |\n|---|---|');
  for (const [name, n] of Object.entries(pagesPer).sort((x, y) => y[1] - x[1])) console.log(`| ${name} | ${n} |`);
  console.log(`${Object.keys(census).length} pages`);
}
