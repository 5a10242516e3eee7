#!/usr/bin/env node
// `npm start`'s build step (docs/operations.md#the-data-directory): compiles dist/ (`tsc -p tsconfig.build.json`, what
// `npm run build` does) only when a source is newer than the last build, so a restart with nothing changed starts at
// once instead of compiling for 20-70 s. "Newer" is by modification time over every file and folder the build reads
// (a folder's time moves when a file in it is added, renamed or deleted), and the compiler's own configuration; the
// build's time is a stamp written after a build that succeeded, so a failed or interrupted build is never taken as
// current.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// the package npm runs the script in (its folder is the working directory), not where this file's links lead
const root = process.cwd();
const SOURCES = ['contracts', 'domain', 'projections', 'parser', 'services'];
const CONFIG = ['tsconfig.json', 'tsconfig.build.json', 'package.json'];
const stamp = join(root, 'dist', '.built');

/** the newest modification time under `path` (itself included), in ms */
const newest = (path) => {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let latest = st.mtimeMs;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
};

const sourcesAt = Math.max(
  ...SOURCES.map((d) => newest(join(root, d))),
  ...CONFIG.filter((f) => existsSync(join(root, f))).map((f) => statSync(join(root, f)).mtimeMs),
);
const builtAt = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;

const force = process.argv.includes('--force');
if (builtAt > sourcesAt && !force) {
  console.error('serp-api: dist/ is newer than every source: not rebuilt (npm run build forces a build)');
} else {
  if (!force)
    console.error(
      builtAt ? 'serp-api: a source changed since the last build: building dist/ …' : 'serp-api: building dist/ …',
    );
  const tsc = spawnSync(
    process.execPath,
    [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
}
