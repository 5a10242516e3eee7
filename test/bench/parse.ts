/**
 * Parse speed over every fixture page: median and p99 ms per page and MB/s, for this parser and for the
 * `serp-parser` npm package (cheerio) on the same pages in the same run. `npx tsx test/bench/parse.ts [rounds]`.
 * Prints figures only; never asserts a time.
 */
import { loadavg } from 'node:os';
import { GoogleMobileSERP, GoogleNojsSERP, GoogleSERP } from 'serp-parser';
import { parse } from '../../parser/index.js';
import { fixturesMissing, listSerpPages, readFixtureText } from '../support/fixtures.js';

interface Figures {
  median: number;
  p99: number;
  mbPerS: number;
  failures: number;
}

const quantile = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

const measure = (
  pages: Array<{ path: string; html: string }>,
  rounds: number,
  fn: (p: { path: string; html: string }) => void,
): Figures => {
  const times: number[] = [];
  let bytes = 0;
  let total = 0;
  let failures = 0;
  for (let r = 0; r < rounds; r++) {
    for (const p of pages) {
      const t0 = performance.now();
      try {
        fn(p);
      } catch {
        failures++;
      }
      const ms = performance.now() - t0;
      times.push(ms);
      total += ms;
      bytes += Buffer.byteLength(p.html);
    }
  }
  times.sort((a, b) => a - b);
  return {
    median: quantile(times, 0.5),
    p99: quantile(times, 0.99),
    mbPerS: bytes / 1e6 / (total / 1000),
    failures: failures / rounds,
  };
};

/** serp-parser has one class per layout; it is given the one matching the page, as its users would. */
const serpParser = ({ path, html }: { path: string; html: string }): void => {
  const P = path.includes('/nojs/') ? GoogleNojsSERP : path.includes('/mobile/') ? GoogleMobileSERP : GoogleSERP;
  void new P(html).serp;
};

const run = (): void => {
  if (fixturesMissing()) return;
  const rounds = Number(process.argv[2] ?? 3);
  const pages = listSerpPages().map((path) => ({ path, html: readFixtureText(path) }));
  const mb = pages.reduce((n, p) => n + Buffer.byteLength(p.html), 0) / 1e6;
  // Each is measured right after its own untimed pass (JIT warm-up), so that neither runs in the other's heap.
  const ourParse = (p: { html: string }) => parse(p.html, { captureAio: true });
  const loadBefore = loadavg()[0] ?? 0;
  measure(pages, 1, ourParse);
  const ours = measure(pages, rounds, ourParse);
  measure(pages, 1, serpParser);
  const theirs = measure(pages, rounds, serpParser);
  const row = (name: string, f: Figures) =>
    `| ${name} | ${f.median.toFixed(2)} | ${f.p99.toFixed(2)} | ${f.mbPerS.toFixed(1)} | ${f.failures} |`;
  // Two cores: a load average above ~1 means the run shared the CPU, and the figures are slower than they would be.
  console.log(
    `${pages.length} pages, ${mb.toFixed(1)} MB, ${rounds} rounds, load average ${loadBefore.toFixed(2)} before / ${(loadavg()[0] ?? 0).toFixed(2)} after`,
  );
  console.log('| parser | median ms/page | p99 ms/page | MB/s | pages that threw |');
  console.log('|---|---|---|---|---|');
  console.log(row('this parser (own document tree, scripts skipped)', ours));
  console.log(row('serp-parser 1.5.0 (cheerio)', theirs));
  console.log(
    `ratio: ${(theirs.median / ours.median).toFixed(1)}× faster by median, ${(ours.mbPerS / theirs.mbPerS).toFixed(1)}× by throughput`,
  );
};

run();
