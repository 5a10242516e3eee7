import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type AllowEntry,
  coverageProblems,
  formatModuleTests,
  kindOf,
  moduleTests,
  REASON_KINDS,
} from '../test/support/moduleTests.js';

/**
 * `npm run coverage:modules`: every module of services/, domain/ and projections/ with the tests that cover it, or the
 * reason test/untested.json gives for it having none (docs/testing.md#which-test-covers-each-module). Exits 1 where
 * test/architecture/moduleTests.test.ts would fail, with the same problems.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const allow = (JSON.parse(readFileSync(join(root, 'test', 'untested.json'), 'utf8')) as { modules: AllowEntry[] })
  .modules;
const found = moduleTests(root);
console.log(formatModuleTests(found, allow));
const covered = [...found.covers.values()].filter((list) => list.length > 0).length;
const kinds = REASON_KINDS.map((k) => `${allow.filter((e) => kindOf(e.reason) === k).length} ${k}`).join(', ');
console.log(`\n${found.covers.size} modules: ${covered} covered by a test, ${allow.length} listed (${kinds})`);
const problems = coverageProblems(root, found, allow);
for (const p of problems) console.error(p);
process.exitCode = problems.length > 0 ? 1 : 0;
