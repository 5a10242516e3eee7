import { spawn } from 'node:child_process';
import t from 'tap';

/**
 * scripts/runTests.mjs, the suite's runner, on the small tap files of test/support/runnerFixtures (outside the
 * default include glob, so the suite never runs them by itself): it counts leaf assertions only, and under CI=true
 * fails on a file or subtest that asserts nothing and on a skip its allow-list does not name (docs/testing.md).
 */
const FIXTURES = 'test/support/runnerFixtures';

/** the environment without this tap run's own variables, so the runner's tap is a top-level run of its own */
const cleanEnv = (ci: boolean) => {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(_?TAP|NODE_OPTIONS$|CI$)/.test(k)) continue;
    env[k] = v;
  }
  if (ci) env.CI = 'true';
  return env;
};

const runner = (files: string[], ci: boolean) =>
  new Promise<{ code: number | null; out: string; last: string }>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['scripts/runTests.mjs', '--skips', `${FIXTURES}/skips.json`, ...files.map((f) => `${FIXTURES}/${f}`)],
      { env: cleanEnv(ci), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, last: out.trim().split('\n').at(-1) ?? '' }));
  });

// three runs of the runner (each starts tap, which takes seconds), started together
const local = runner(['oneAssertAndEmptySubtest.ts'], false);
const listed = runner(['listedSkip.ts'], true);
const ci = runner(['oneAssertAndEmptySubtest.ts', 'noAssertions.ts', 'skips.ts', 'nested.ts'], true);

t.test('test runner › one assertion and an empty subtest count as one pass', async (t) => {
  const run = await local;
  t.equal(run.last, '1 passed, 0 failed, 0 skipped', "the empty subtest's summary line is not a pass");
  t.equal(run.code, 0, 'outside CI an empty subtest is reported, not failed');
  t.match(
    run.out,
    /No assertions \(a failure under CI=true\):\n {2}- .*oneAssertAndEmptySubtest\.ts › an empty subtest\n/,
  );
});

t.test('test runner › a listed skip is counted as skipped, and passes under CI', async (t) => {
  const run = await listed;
  t.equal(run.last, '1 passed, 0 failed, 1 skipped');
  t.equal(run.code, 0);
  t.match(run.out, /Skipped:\n {2}- .*listedSkip\.ts › a listed skip: needs a server this machine cannot run\n/);
});

t.test('test runner › under CI: no assertions and unlisted skips fail; leaves counted at any depth', async (t) => {
  const run = await ci;
  // oneAssert…: 1 pass + its empty subtest; noAssertions: the file; skips: 1 pass, 1 listed, 1 unlisted;
  // nested: 2 passes and 1 failure two subtests down
  t.equal(run.last, '4 passed, 4 failed, 1 skipped');
  t.not(run.code, 0, 'non-zero exit');
  const failed = run.out
    .slice(run.out.lastIndexOf('\nFailed:\n'))
    .split('\n')
    .filter((l) => l.startsWith('  - '));
  t.same(
    failed.map((l) => l.replace(/^ {2}- test\/support\/runnerFixtures\//, '')).sort(),
    [
      'nested.ts › outer › inner › inner failing leaf',
      'skips.ts › an unlisted skip: skipped (nobody listed this) but not listed in test/support/runnerFixtures/skips.json',
      'oneAssertAndEmptySubtest.ts › an empty subtest: no assertions',
      'noAssertions.ts: no assertions',
    ].sort(),
    'each failure listed by name',
  );
});
