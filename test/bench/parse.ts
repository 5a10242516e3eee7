/**
 * Parse speed over every fixture page: median and p99 ms per page and MB/s, for this parser and for the
 * `serp-parser` npm package (cheerio) on the same pages in the same run, rounds alternating which parser goes first
 * (compare.ts). The figures and ratios are over the pages both parsers read without throwing (the same work); the
 * pages each threw on are counted beside. `npx tsx test/bench/parse.ts [rounds]`. Prints figures only; never
 * asserts a time.
 */
import { loadavg } from 'node:os';
import { GoogleMobileSERP, GoogleNojsSERP, GoogleSERP } from 'serp-parser';
import { parse } from '../../parser/index.js';
import { fixturesMissing, listSerpPages, readFixtureText } from '../support/fixtures.js';
import { alternate, printRatio, quantile } from './compare.js';

interface Figures {
  median: number;
  p99: number;
  mbPerS: number;
  failures: number;
}

type Page = { path: string; html: string };

/** ms per page of `fn` over every page, or undefined where it threw */
const timePages = (pages: Page[], fn: (p: Page) => void): (number | undefined)[] =>
  pages.map((p) => {
    const t0 = performance.now();
    try {
      fn(p);
    } catch {
      return undefined;
    }
    return performance.now() - t0;
  });

/** figures over the pages in `keep` (those both parsers read), from every round's times */
const figures = (pages: Page[], rounds: (number | undefined)[][], keep: boolean[], failures: number): Figures => {
  const times: number[] = [];
  let bytes = 0;
  for (const round of rounds) {
    round.forEach((ms, i) => {
      if (!keep[i] || ms === undefined) return;
      times.push(ms);
      bytes += Buffer.byteLength(pages[i]!.html);
    });
  }
  const total = times.reduce((n, ms) => n + ms, 0);
  return { median: quantile(times, 0.5), p99: quantile(times, 0.99), mbPerS: bytes / 1e6 / (total / 1000), failures };
};

/** serp-parser has one class per layout; it is given the one matching the page, as its users would. */
const serpParser = ({ path, html }: Page): void => {
  const P = path.includes('/nojs/') ? GoogleNojsSERP : path.includes('/mobile/') ? GoogleMobileSERP : GoogleSERP;
  void new P(html).serp;
};

const run = async (): Promise<void> => {
  if (fixturesMissing()) return;
  const rounds = Number(process.argv[2] ?? 3);
  const pages = listSerpPages().map((path) => ({ path, html: readFixtureText(path) }));
  const mb = pages.reduce((n, p) => n + Buffer.byteLength(p.html), 0) / 1e6;
  const ourParse = (p: Page) => parse(p.html, { captureAio: true });
  const loadBefore = loadavg()[0] ?? 0;
  // an untimed pass of each first (JIT warm-up), then rounds with the first parser alternated
  timePages(pages, ourParse);
  timePages(pages, serpParser);
  const sides = await alternate(rounds, {
    ours: async () => timePages(pages, ourParse),
    theirs: async () => timePages(pages, serpParser),
  });
  const threw = (side: (number | undefined)[][]) => pages.map((_, i) => side.some((r) => r[i] === undefined));
  const [oursThrew, theirsThrew] = [threw(sides.ours), threw(sides.theirs)];
  // the same work: the pages both parsers read without throwing
  const both = pages.map((_, i) => !oursThrew[i] && !theirsThrew[i]);
  const count = (xs: boolean[]) => xs.filter(Boolean).length;
  const ours = figures(pages, sides.ours, both, count(oursThrew));
  const theirs = figures(pages, sides.theirs, both, count(theirsThrew));
  const row = (name: string, f: Figures) =>
    `| ${name} | ${f.median.toFixed(2)} | ${f.p99.toFixed(2)} | ${f.mbPerS.toFixed(1)} | ${f.failures} |`;
  // Two cores: a load average above ~1 means the run shared the CPU, and the figures are slower than they would be.
  console.log(
    `${pages.length} pages, ${mb.toFixed(1)} MB, ${rounds} rounds (first parser alternated), load average ${loadBefore.toFixed(2)} before / ${(loadavg()[0] ?? 0).toFixed(2)} after`,
  );
  console.log(`timed over the ${count(both)} pages both parsers read without throwing`);
  console.log('| parser | median ms/page | p99 ms/page | MB/s | pages that threw |');
  console.log('|---|---|---|---|---|');
  console.log(row('this parser (own document tree, scripts skipped)', ours));
  console.log(row('serp-parser 1.5.0 (cheerio)', theirs));
  // a page either parser threw on is left out of both sides' figures, so the ratios compare the same pages
  printRatio(
    'ratio by median, serp-parser time / this parser time',
    { value: theirs.median, failures: 0 },
    { value: ours.median, failures: 0 },
  );
  printRatio(
    'ratio by throughput, this parser MB/s / serp-parser MB/s',
    { value: ours.mbPerS, failures: 0 },
    { value: theirs.mbPerS, failures: 0 },
  );
};

await run();
