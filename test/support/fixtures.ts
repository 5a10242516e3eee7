import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { loadTestSettings } from '../../services/config/tests.js';

const here = dirname(fileURLToPath(import.meta.url));

/** `../shared` beside the checkout, or SERP_FIXTURES_DIR (pointing at the folder that holds `serp/` and `geo/`). */
export const fixturesDir = resolve(
  loadTestSettings().fixturesDir ?? join(here, '..', '..', '..', 'shared', 'fixtures'),
);

/**
 * Why fixture tests cannot run, or undefined when they can. Under CI=true a missing folder throws instead:
 * a wrong path must never turn into green skips.
 */
export const fixturesMissing = (sub = 'serp'): string | undefined => {
  const dir = join(fixturesDir, sub);
  if (existsSync(dir)) return undefined;
  const reason = `fixtures not found at ${dir} (set SERP_FIXTURES_DIR)`;
  if (process.env.CI === 'true') throw new Error(`${reason}: CI requires them`);
  console.log(`# skipping: ${reason}`);
  return reason;
};

/** Reads a fixture file, gunzipping `.gz`. `path` is relative to the fixtures folder. */
export const readFixture = (path: string): Buffer => {
  const buf = readFileSync(join(fixturesDir, path));
  return path.endsWith('.gz') ? gunzipSync(buf) : buf;
};

export const readFixtureText = (path: string): string => readFixture(path).toString('utf8');

/** Every page under `serp/` (`*.html.gz`), as paths relative to the fixtures folder, sorted. */
export const listSerpPages = (): string[] => {
  const root = join(fixturesDir, 'serp');
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name.endsWith('.html.gz')) out.push(relative(fixturesDir, full));
    }
  };
  if (existsSync(root)) walk(root);
  return out.sort();
};
