import { parse } from '../../parser/index.js';
import { listSerpPages, readFixtureText } from '../support/fixtures.js';

/**
 * What the parser finds on each fixture page: per SERP feature (and `organic_results`, `ai_overview`), how many
 * items, 1 for a single object. A page that is not a result page is `{ kind: 1 }` (`captcha`, `consent`, …).
 * Used to diff the corpus before and after a parser change (test/bench/featureCensus.ts) and to pin which pages carry
 * a feature (featureCensus.test.ts).
 */
export type Census = Record<string, Record<string, number>>;

const sizeOf = (value: unknown): number => (Array.isArray(value) ? value.length : 1);

export const featuresOfPage = (page: string): Record<string, number> => {
  const out = parse(readFixtureText(page), { captureAio: true });
  if (out.kind !== 'serp') return { [out.kind]: 1 };
  const counts: Record<string, number> = {};
  if (out.serp.organic_results.length) counts.organic_results = out.serp.organic_results.length;
  if (out.serp.ai_overview !== undefined) counts.ai_overview = 1;
  for (const [name, value] of Object.entries(out.serp.serp_features)) counts[name] = sizeOf(value);
  return counts;
};

export const censusOfCorpus = (): Census => Object.fromEntries(listSerpPages().map((p) => [p, featuresOfPage(p)]));

/** The pages that carry `feature`, sorted. */
export const pagesWith = (census: Census, feature: string): string[] =>
  Object.keys(census)
    .filter((page) => census[page]?.[feature] !== undefined)
    .sort();

/** Per page, the features gained, lost or changed in count between two censuses (pages only in one side included). */
export const diffCensus = (before: Census, after: Census): string[] => {
  const lines: string[] = [];
  for (const page of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
    const a = before[page] ?? {};
    const b = after[page] ?? {};
    for (const name of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      if (a[name] === b[name]) continue;
      if (a[name] === undefined) lines.push(`+ ${page} ${name} (${b[name]})`);
      else if (b[name] === undefined) lines.push(`- ${page} ${name} (${a[name]})`);
      else lines.push(`~ ${page} ${name} ${a[name]} → ${b[name]}`);
    }
  }
  return lines;
};
