import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { PARSER_VERSION, parse } from '../../parser/index.js';
import { fixturesDir, fixturesMissing } from '../support/fixtures.js';
import { buildInto } from '../support/service.js';

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PAGE = 'serp/websearcher/2024-03-13_cistern_81f344a9684a.html.gz';

/**
 * The parser is a library of its own: a user imports `serp-api/parser` (package `exports`) from the compiled
 * package, with nothing of the service loaded. Built into a temporary folder so the checkout's dist is not touched.
 */
t.test('serp-api/parser › the compiled package exports parse, classify, toCompat and PARSER_VERSION', async (t) => {
  if (fixturesMissing()) return;
  const pkg = mkdtempSync(join(tmpdir(), 'serp-parser-pkg-'));
  t.teardown(() => rmSync(pkg, { recursive: true, force: true }));
  await buildInto(join(pkg, 'dist'));
  copyFileSync(join(root, 'package.json'), join(pkg, 'package.json'));
  symlinkSync(join(root, 'node_modules'), join(pkg, 'node_modules'), 'dir');
  const script = join(pkg, 'use.mjs');
  writeFileSync(
    script,
    `import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import * as parser from 'serp-api/parser';
const html = gunzipSync(readFileSync(process.argv[2])).toString('utf8');
const out = parser.parse(html, { captureAio: true, start: 0 });
console.log(JSON.stringify({
  exports: Object.keys(parser).sort(),
  version: parser.PARSER_VERSION,
  kind: parser.classify('<html><form action="/sorry/index"></form>captcha</html>', { finalUrl: 'https://www.google.com/sorry/index' }).kind,
  organic: out.kind === 'serp' ? out.serp.organic_results.map((r) => r.link) : [],
  compatKeys: out.kind === 'serp' ? Object.keys(parser.toCompat({ search_metadata: { id: 'x', status: 'done', cached: false, created_at: '', parameters: {}, information: {} }, organic_results: out.serp.organic_results, serp_features: out.serp.serp_features })).sort() : [],
}));
`,
  );
  const { stdout } = await run(process.execPath, [script, join(fixturesDir, PAGE)], { cwd: pkg });
  const got = JSON.parse(stdout);
  for (const name of ['PARSER_VERSION', 'classify', 'classifyPage', 'parse', 'parseRaw', 'toCompat']) {
    t.ok(got.exports.includes(name), `exports ${name}`);
  }
  t.equal(got.version, PARSER_VERSION, 'the same parser version as the sources');
  t.equal(got.kind, 'captcha', 'classify tells a CAPTCHA page');
  const { readFixtureText } = await import('../support/fixtures.js');
  const here = parse(readFixtureText(PAGE), { captureAio: true, start: 0 });
  t.same(got.organic, here.kind === 'serp' ? here.serp.organic_results.map((r) => r.link) : [], 'same links');
  t.ok(got.organic.length > 0, 'the page has organic results');
  t.ok(got.compatKeys.includes('organic_results'), 'toCompat gives the compat envelope');
  const reached = reachable(join(pkg, 'dist', 'parser', 'index.js'));
  t.ok(reached.size > 10, `follows the parser's own imports (${reached.size} modules)`);
  t.same(
    [...reached].filter(
      (f) => !f.includes(`${join(pkg, 'dist', 'parser')}/`) && !f.includes(`${join(pkg, 'dist', 'contracts')}/`),
    ),
    [],
    'the compiled parser reaches only parser/ and contracts/ modules',
  );
});

/** Every compiled module a file imports, transitively (relative specifiers only: packages are not ours). */
const reachable = (entry: string, seen = new Set<string>()) => {
  if (seen.has(entry)) return seen;
  seen.add(entry);
  for (const m of readFileSync(entry, 'utf8').matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
    reachable(resolve(dirname(entry), m[1]), seen);
  }
  return seen;
};
