import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';

/**
 * `npm start` builds only when a source is newer than the last build (scripts/buildIfStale.mjs,
 * docs/operations.md#the-data-directory). Run here in a package of its own whose compiler only counts its runs: the
 * decision is what is tested, not tsc.
 */
const script = join(import.meta.dirname, '..', '..', 'scripts', 'buildIfStale.mjs');

t.test('buildIfStale: builds when a source is newer than the stamp, and only then', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-stale-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const d of ['contracts', 'domain', 'projections', 'parser', 'services', 'node_modules/typescript/bin', 'dist'])
    mkdirSync(join(dir, d), { recursive: true });
  for (const d of ['contracts', 'domain', 'projections', 'parser', 'services']) writeFileSync(join(dir, d, 'a.ts'), '');
  writeFileSync(join(dir, 'tsconfig.build.json'), '{}');
  // a compiler that records each run, and fails when told to
  writeFileSync(
    join(dir, 'node_modules/typescript/bin/tsc'),
    "const fs = require('node:fs'); fs.appendFileSync('runs', 'x'); if (fs.existsSync('fail')) process.exit(2);",
  );
  const runs = () => (existsSync(join(dir, 'runs')) ? readFileSync(join(dir, 'runs'), 'utf8').length : 0);
  const start = (...args: string[]) => {
    try {
      return {
        code: 0,
        err: execFileSync(process.execPath, [script, ...args], { cwd: dir, stdio: 'pipe' }).toString(),
      };
    } catch (e) {
      return { code: (e as { status: number }).status, err: String((e as { stderr: Buffer }).stderr) };
    }
  };
  const past = (path: string, secondsAgo: number) => {
    const at = new Date(Date.now() - secondsAgo * 1000);
    utimesSync(join(dir, path), at, at);
  };
  for (const d of ['contracts', 'domain', 'projections', 'parser', 'services'])
    for (const p of [d, `${d}/a.ts`]) past(p, 60);
  past('tsconfig.build.json', 60);

  t.equal(start().code, 0, 'no build yet: it builds');
  t.equal(runs(), 1, 'the compiler ran once');
  t.ok(existsSync(join(dir, 'dist', '.built')), 'and the build is stamped');
  start();
  t.equal(runs(), 1, 'nothing changed since: no build');
  writeFileSync(join(dir, 'services', 'a.ts'), 'changed');
  start();
  t.equal(runs(), 2, 'a source edited after the stamp: it builds');
  start();
  t.equal(runs(), 2, 'and then not again');
  writeFileSync(join(dir, 'parser', 'new.ts'), '');
  rmSync(join(dir, 'parser', 'new.ts'));
  start();
  t.equal(runs(), 3, 'a file added and removed (its folder newer): it builds');
  start('--force');
  t.equal(runs(), 4, '--force (npm run build, the test runner) always builds');
  writeFileSync(join(dir, 'fail'), '');
  writeFileSync(join(dir, 'domain', 'a.ts'), 'changed again');
  const failed = start();
  t.equal(failed.code, 2, 'a failed build fails npm start with the compiler’s code');
  rmSync(join(dir, 'fail'));
  start();
  t.equal(runs(), 6, 'and is not taken as current: the next start builds again');
});
