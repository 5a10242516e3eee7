#!/usr/bin/env node
// Runs the suite with tap and ends with the one line CI reads: "N passed, N failed, N skipped" (docs/testing.md).
//
// Only leaf assertions count: a subtest's closing `ok` line sums up its children and is not a pass of its own (a
// failing one counts once, and only when none of its children failed). Skips and todos count as skipped.
// Under CI=true two more things fail the run, each listed by name: a file or subtest that ran no assertion, and a
// skip that the allow-list (test/skips.json, or `--skips FILE`) does not name with its reason.
//
// Before tap starts, the runner builds dist/ (`tsc -p tsconfig.build.json`, what `npm run build` does) and tells the
// tests so (SERP_TEST_BUILT=1): the services and CLIs they start then run the compiled code, as `npm start` does,
// rather than compiling the sources through tsx at every start (docs/testing.md#the-build-the-tests-run). A failed
// build fails the run. `--no-build` runs the sources through tsx instead.
//
//   node scripts/runTests.mjs [--skips FILE] [--no-build] [tap arguments and files…]
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Parser } from 'tap-parser';

const noBuild = process.argv.includes('--no-build');
const argv = process.argv.slice(2).filter((a) => a !== '--no-build');
const skipsAt = argv.indexOf('--skips');
const skipsFile = skipsAt === -1 ? 'test/skips.json' : argv[skipsAt + 1];
const tapArgs = skipsAt === -1 ? argv : [...argv.slice(0, skipsAt), ...argv.slice(skipsAt + 2)];
const ci = process.env.CI === 'true';

/** "file › test › sub-test" → the reason it may skip, from the allow-list */
const loadAllowed = (file) => {
  const { skips } = JSON.parse(readFileSync(file, 'utf8'));
  const allowed = new Map();
  for (const s of skips) {
    if (!s.file || !s.reason)
      throw new Error(`${file}: every skip names its file and its reason: ${JSON.stringify(s)}`);
    allowed.set([s.file, ...(s.test ? [s.test] : [])].join(' › '), s.reason);
  }
  return allowed;
};
const allowed = loadAllowed(skipsFile);

const counts = { pass: 0, fail: 0, skip: 0 };
const failures = [];
const empty = [];
const skipped = [];

/** One test (file or subtest): how many leaf assertions and failures its whole subtree holds. */
const node = (parent) => ({ parent, leaves: 0, failures: 0 });
const addLeaf = (at, failed) => {
  for (let n = at; n; n = n.parent) {
    n.leaves += 1;
    if (failed) n.failures += 1;
  }
};

const recordSkip = (at, path, res) => {
  const name = path.join(' › ');
  const reason = typeof (res.skip || res.todo) === 'string' ? res.skip || res.todo : '';
  const listed = allowed.has(name);
  skipped.push({ name, reason, listed });
  if (ci && !listed) {
    counts.fail += 1;
    addLeaf(at, true);
    failures.push(`${name}: skipped (${reason || 'no reason'}) but not listed in ${skipsFile}`);
  } else {
    counts.skip += 1;
    addLeaf(at, false);
  }
};

const watch = (parser, path, at) => {
  let lastChild;
  parser.on('child', (c) => {
    lastChild = node(at);
    watch(c, [...path, c.name], lastChild);
  });
  parser.on('assert', (res) => {
    const here = [...path, res.name];
    const child = res.closingTestPoint ? lastChild : undefined;
    if (res.skip === 'no tests found' && child?.leaves === 0) {
      empty.push(here.join(' › '));
    } else if (res.skip || res.todo) {
      recordSkip(at, here, res);
    } else if (!res.closingTestPoint) {
      counts[res.ok ? 'pass' : 'fail'] += 1;
      addLeaf(at, !res.ok);
      if (!res.ok) failures.push(here.join(' › '));
    } else if (!res.ok && child && child.failures === 0) {
      // the subtest failed for a reason none of its assertions carries (a plan mismatch, a crashed process)
      counts.fail += 1;
      addLeaf(at, true);
      failures.push(here.join(' › '));
    } else if (res.ok && child && child.leaves === 0) {
      empty.push(here.join(' › '));
    }
  });
};

/** dist/ fresh from the sources; a nested runner (the runner's own tests) uses its parent's build */
const build = () => {
  if (noBuild || process.env.SERP_TEST_BUILT === '1') return;
  const started = Date.now();
  // the build `npm start` makes, stamped the same way, so a start after the tests does not build again
  const tsc = spawnSync(process.execPath, ['scripts/buildIfStale.mjs', '--force'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (tsc.status !== 0) {
    console.log('\nFailed:\n  - the build (tsc -p tsconfig.build.json): the tests run the compiled service');
    console.log('\n0 passed, 1 failed, 0 skipped');
    process.exit(1);
  }
  process.env.SERP_TEST_BUILT = '1';
  console.log(`# built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s: the tests run the compiled service`);
};
build();

/**
 * The soaks (docs/operations.md#the-soak) measure reads and memory against the service's own idle baseline: beside
 * another test file on the same two cores they measure the machine instead. A whole-suite run (no files named) runs
 * them after everything else, one at a time; named on the command line, they run where they are named.
 */
const SOAKS = ['test/soak/embedded.test.ts', 'test/soak/cluster.test.ts'];
const named = tapArgs.some((a) => !a.startsWith('-'));
const phases = named
  ? [tapArgs]
  : [
      [...tapArgs, ...SOAKS.map((f) => `--exclude=${f}`)],
      [...tapArgs, '--jobs=1', ...SOAKS],
    ];

/** one run of tap, its TAP read into the counts; resolves with its exit code */
const runTap = (args) =>
  new Promise((resolve) => {
    const root = new Parser();
    watch(root, [], undefined);
    const child = spawn('npx', ['tap', '--reporter=tap', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      root.write(chunk);
    });
    child.on('close', (code) => {
      root.end();
      resolve(code);
    });
  });

const codes = [];
for (const args of phases) codes.push(await runTap(args));
const code = codes.find((c) => c !== 0) ?? 0;

if (ci) {
  for (const name of empty) failures.push(`${name}: no assertions`);
  counts.fail += empty.length;
} else if (empty.length) {
  console.log(`\nNo assertions (a failure under CI=true):\n${empty.map((e) => `  - ${e}`).join('\n')}`);
}
if (skipped.length) {
  const line = (s) => `  - ${s.name}: ${s.reason || 'no reason'}${s.listed ? '' : ` (not in ${skipsFile})`}`;
  console.log(`\nSkipped:\n${skipped.map(line).join('\n')}`);
}
if (failures.length) console.log(`\nFailed:\n${failures.map((f) => `  - ${f}`).join('\n')}`);
console.log(`\n${counts.pass} passed, ${counts.fail} failed, ${counts.skip} skipped`);
process.exit(code === 0 ? (counts.fail > 0 ? 1 : 0) : (code ?? 1));
