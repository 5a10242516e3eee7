/**
 * Parser accuracy against other parsers' expected outputs, one row per fixture source:
 * `npx tsx test/bench/parseAccuracy.ts [--pages]`. Reports figures only; the tests assert per page
 * (fixtures.test.ts for links, titles, counts and features; fields.test.ts for per-result fields).
 */
import { parse } from '../../parser/index.js';
import { normLink } from '../parser/compare.js';
import { checkField, type Expectation, expectationFor, FIELD_NAMES, type FieldName } from '../parser/expected.js';
import { fixturesMissing, listSerpPages, readFixtureText } from '../support/fixtures.js';

interface Tally {
  pages: number;
  kindOk: number;
  kindTotal: number;
  tp: number;
  fp: number;
  fn: number;
  pairsAgree: number;
  pairs: number;
  countOk: number;
  countTotal: number;
  atOk: number;
  atTotal: number;
  featOk: number;
  featTotal: number;
  /** Per field: how many results the source pins it for, and on how many we agree. */
  fields: Record<FieldName, { pinned: number; ok: number }>;
}

const empty = (): Tally => ({
  pages: 0,
  kindOk: 0,
  kindTotal: 0,
  tp: 0,
  fp: 0,
  fn: 0,
  pairsAgree: 0,
  pairs: 0,
  countOk: 0,
  countTotal: 0,
  atOk: 0,
  atTotal: 0,
  featOk: 0,
  featTotal: 0,
  fields: Object.fromEntries(FIELD_NAMES.map((f) => [f, { pinned: 0, ok: 0 }])) as Tally['fields'],
});

const score = (t: Tally, e: Expectation, page: string, verbose: boolean): void => {
  const out = parse(readFixtureText(page), { captureAio: true });
  t.pages++;
  if (e.kind) {
    t.kindTotal++;
    if (out.kind === e.kind) t.kindOk++;
    else if (verbose) console.log(`  kind ${page}: got ${out.kind}, expected ${e.kind}`);
  }
  if (out.kind !== 'serp') return;
  const got = out.serp.organic_results.map((r) => normLink(r.link ?? ''));
  if (e.organicLinks) {
    const want = e.organicLinks.map(normLink);
    const gotSet = new Set(got);
    const wantSet = new Set(want);
    const tp = want.filter((l) => gotSet.has(l)).length;
    t.tp += tp;
    t.fn += want.length - tp;
    t.fp += got.filter((l) => !wantSet.has(l)).length;
    if (verbose && (tp < want.length || got.length > tp)) {
      console.log(`  links ${page}:`);
      for (const l of want.filter((x) => !gotSet.has(x))) console.log(`    missing ${l}`);
      for (const l of got.filter((x) => !wantSet.has(x))) console.log(`    extra   ${l}`);
    }
    const common = want.filter((l) => gotSet.has(l));
    const gotIndex = new Map(got.map((l, i) => [l, i]));
    for (let i = 0; i < common.length; i++)
      for (let j = i + 1; j < common.length; j++) {
        t.pairs++;
        if ((gotIndex.get(common[i] ?? '') ?? 0) < (gotIndex.get(common[j] ?? '') ?? 0)) t.pairsAgree++;
      }
  }
  if (e.organicCount !== undefined) {
    t.countTotal++;
    if (got.length === e.organicCount) t.countOk++;
    else if (verbose) console.log(`  count ${page}: got ${got.length}, expected ${e.organicCount}`);
  }
  for (const a of e.organicAt ?? []) {
    t.atTotal++;
    const r = out.serp.organic_results[a.index];
    const ok =
      r !== undefined &&
      (a.link === undefined || normLink(r.link ?? '') === normLink(a.link)) &&
      (a.title === undefined || r.title === a.title);
    if (ok) t.atOk++;
    else if (verbose)
      console.log(
        `  at ${page}[${a.index}]: got ${r?.link} "${r?.title}", expected ${a.link ?? ''} "${a.title ?? ''}"`,
      );
  }
  for (const [name, present] of Object.entries(e.features ?? {})) {
    t.featTotal++;
    const found = name === 'ai_overview' ? out.serp.ai_overview !== undefined : name in out.serp.serp_features;
    if (found === present) t.featOk++;
    else if (verbose) console.log(`  feature ${page}: ${name} ${found ? 'found' : 'missing'}, expected ${present}`);
  }
  for (const pin of e.fields ?? []) {
    const c = checkField(out.serp.organic_results, pin);
    t.fields[pin.field].pinned++;
    if (c.ok) t.fields[pin.field].ok++;
    else if (verbose)
      console.log(
        `  ${pin.field} ${page}[${pin.link ?? pin.index}]: got ${JSON.stringify(c.got)}, expected ${JSON.stringify(c.want)}`,
      );
  }
};

const pct = (a: number, b: number): string => (b === 0 ? '—' : `${((100 * a) / b).toFixed(1)}%`);

export const runAccuracy = (verbose: boolean): void => {
  if (fixturesMissing()) return;
  const bySource = new Map<string, Tally>();
  const corrected: string[] = [];
  const fieldsCorrected: string[] = [];
  for (const page of listSerpPages()) {
    const e = expectationFor(page);
    if (!e) continue;
    if (e.corrected) corrected.push(`${page} (${e.corrected})`);
    for (const why of e.fieldsCorrected ?? []) fieldsCorrected.push(`${page} ${why}`);
    const source = page.split('/')[1] ?? page;
    const t = bySource.get(source) ?? empty();
    bySource.set(source, t);
    score(t, e, page, verbose);
  }
  console.log(
    '| source | pages | kind | link precision | link recall | order agreement | count exact | link/title at index | features |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const [source, t] of [...bySource].sort()) {
    console.log(
      `| ${source} | ${t.pages} | ${pct(t.kindOk, t.kindTotal)} | ${pct(t.tp, t.tp + t.fp)} | ${pct(t.tp, t.tp + t.fn)} | ${pct(t.pairsAgree, t.pairs)} | ${pct(t.countOk, t.countTotal)} | ${pct(t.atOk, t.atTotal)} | ${pct(t.featOk, t.featTotal)} |`,
    );
  }
  // Per-result fields: "pinned" counts results whose field the source asserts; sources that pin none are left out.
  console.log('');
  console.log(`| source | ${FIELD_NAMES.map((f) => `${f} pinned | ${f} agree`).join(' | ')} |`);
  console.log(`|---|${FIELD_NAMES.map(() => '---|---').join('|')}|`);
  for (const [source, t] of [...bySource].sort()) {
    const cells = FIELD_NAMES.map((f) => t.fields[f]);
    if (cells.every((c) => c.pinned === 0)) continue;
    console.log(`| ${source} | ${cells.map((c) => `${c.pinned} | ${pct(c.ok, c.pinned)}`).join(' | ')} |`);
  }
  // Scored against the right answer where the other parser is shown wrong (test/parser/expected.ts CORRECTIONS).
  if (corrected.length) console.log(`expectations corrected (${corrected.length}): ${corrected.join('; ')}`);
  if (fieldsCorrected.length)
    console.log(`field pins corrected (${fieldsCorrected.length}): ${fieldsCorrected.join('; ')}`);
};

runAccuracy(process.argv.includes('--pages'));
