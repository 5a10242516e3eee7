/**
 * Parse speed of two checkouts' parsers in one process, page by page: `npx tsx test/bench/parseAb.ts ROOT_A ROOT_B
 * [rounds]` (e.g. a checkout of main against this one). Each fixture page is parsed by both, in an order that
 * alternates from page to page and round to round, so a loaded or drifting machine slows both sides alike; time is
 * the process's CPU time (process.cpuUsage, GC threads included), which waiting for a core on a shared machine does
 * not inflate. The first round warms both up and is not counted. Prints each side's median and p99 ms a page and
 * total MB/s, and B's total time as a ratio of A's. Both outputs are compared first: pages whose results differ are
 * counted (a ratio between parsers that disagree is still printed, with the count beside it). Prints figures only;
 * never asserts a time.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { fixturesMissing, listSerpPages, readFixtureText } from '../support/fixtures.js';

type Parse = (html: string, context: { captureAio: boolean }) => unknown;

const load = async (root: string): Promise<Parse> =>
  ((await import(pathToFileURL(resolve(root, 'parser/index.ts')).href)) as { parse: Parse }).parse;

const quantile = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

const run = async (): Promise<void> => {
  if (fixturesMissing()) return;
  const [rootA, rootB] = process.argv.slice(2);
  if (!rootA || !rootB) {
    console.error('usage: npx tsx test/bench/parseAb.ts ROOT_A ROOT_B [rounds]');
    process.exit(1);
  }
  const rounds = Number(process.argv[4] ?? 5);
  const sides = [
    { name: `A ${rootA}`, parse: await load(rootA), times: [] as number[], total: 0 },
    { name: `B ${rootB}`, parse: await load(rootB), times: [] as number[], total: 0 },
  ];
  const pages = listSerpPages().map((path) => readFixtureText(path));
  const bytes = pages.reduce((n, html) => n + Buffer.byteLength(html), 0);
  let differ = 0;
  for (const html of pages) {
    const [a, b] = sides.map((s) => JSON.stringify(s.parse(html, { captureAio: true })));
    if (a !== b) differ++;
  }
  const cpuMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  for (let r = 0; r <= rounds; r++) {
    pages.forEach((html, i) => {
      const order = (i + r) % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        const t0 = cpuMs();
        side.parse(html, { captureAio: true });
        const ms = cpuMs() - t0;
        if (r === 0) continue;
        side.times.push(ms);
        side.total += ms;
      }
    });
  }
  console.log(
    `${pages.length} pages, ${(bytes / 1e6).toFixed(1)} MB, ${rounds} rounds after a warm-up, sides alternated per page, CPU time`,
  );
  console.log(`pages whose results differ between A and B: ${differ}`);
  console.log('| side | median CPU ms/page | p99 CPU ms/page | MB/s of CPU time |');
  console.log('|---|---|---|---|');
  sides.forEach((side) => {
    const sorted = [...side.times].sort((x, y) => x - y);
    const mbPerS = (bytes * rounds) / 1e6 / (side.total / 1000);
    console.log(
      `| ${side.name} | ${quantile(sorted, 0.5).toFixed(2)} | ${quantile(sorted, 0.99).toFixed(2)} | ${mbPerS.toFixed(1)} |`,
    );
  });
  const [a, b] = sides;
  console.log(`B's total CPU time / A's: ${((b?.total ?? 0) / (a?.total || 1)).toFixed(3)}`);
};

await run();
