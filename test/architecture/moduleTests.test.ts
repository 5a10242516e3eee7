import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import {
  type AllowEntry,
  coverageProblems,
  formatModuleTests,
  kindOf,
  moduleTests,
  REASON_KINDS,
} from '../support/moduleTests.js';

/**
 * Every module of services/, domain/ and projections/ is imported by a test, or test/untested.json says why it has
 * none (docs/testing.md#which-test-covers-each-module). `npm run coverage:modules` prints which test covers what.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const allowList = (JSON.parse(readFileSync(join(root, 'test', 'untested.json'), 'utf8')) as { modules: AllowEntry[] })
  .modules;

t.test('module tests › every module has a test, or a true reason on the allow-list', async (t) => {
  const found = moduleTests(root);
  const covered = [...found.covers.values()].filter((list) => list.length > 0).length;
  const byKind = REASON_KINDS.map((k) => `${allowList.filter((e) => kindOf(e.reason) === k).length} ${k}`);
  t.ok(
    found.covers.size > 200,
    `${found.covers.size} modules: ${covered} covered by a test; listed: ${byKind.join(', ')}`,
  );
  t.same(coverageProblems(root, found, allowList), [], 'no module without a test or a reason, and no stale entry');
});

/** a repository of a few files, each a case the check must see right */
const planted = (files: Record<string, string>) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-module-tests-'));
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), source);
  }
  return dir;
};

t.test('module tests › what counts as covering a module', async (t) => {
  const dir = planted({
    'domain/value.ts': 'export const v = 1;\nexport interface Shape { a: number }\n',
    'domain/typeOnly.ts': 'export interface T { a: number }\nexport const unused = 2;\n',
    'domain/namedTypes.ts': 'export interface N { a: number }\nexport const n = 3;\n',
    'services/viaHelper.ts': 'export const h = 4;\n',
    'services/dynamic.ts': 'export const d = 5;\n',
    'services/byPath.ts': 'export const p = 6;\n',
    'services/inner.ts': 'export const i = 7;\n',
    'services/outer.ts': "import { i } from './inner.js';\nexport const o = i;\n",
    'services/starter.ts':
      "export const start = (startThread: (n: string) => void) => startThread('pipelineWorker');\n",
    'services/pipelineWorker.ts': 'export const w = 8;\n',
    'projections/alone.ts': 'export const a = 9;\n',
    'test/support/helper.ts': "export { h } from '../../services/viaHelper.js';\n",
    'test/unit/a.test.ts': [
      "import { v } from '../../domain/value.js';",
      "import type { T } from '../../domain/typeOnly.js';",
      "import { type N } from '../../domain/namedTypes.js';",
      "import { h } from '../support/helper.js';",
      "import { o } from '../../services/outer.js';",
      "import { start } from '../../services/starter.js';",
      "const m = await import('../../services/dynamic.js');",
      "const child = new URL('../../services/byPath.ts', import.meta.url);",
      'export const used: [typeof v, T | N, typeof h, typeof o, unknown, URL, typeof start] = [v, { a: 1 }, h, o, m, child, start];',
    ].join('\n'),
  });
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { covers, loadedBy } = moduleTests(dir);
  const how = (m: string) => (covers.get(m) ?? []).map((c) => `${c.how}${c.via ? ` via ${c.via}` : ''}`);
  t.same(how('domain/value.ts'), ['import'], 'a value import covers');
  t.same(how('domain/typeOnly.ts'), [], 'an `import type` does not');
  t.same(how('domain/namedTypes.ts'), [], 'nor names that are all types');
  t.same(how('services/viaHelper.ts'), ['import via test/support/helper.ts'], 'a helper of test/ passes it on');
  t.same(how('services/dynamic.ts'), ['dynamic import'], 'a dynamic import covers');
  t.same(how('services/byPath.ts'), ['path'], 'so does a path a test builds to load it in a process of its own');
  t.same(how('services/pipelineWorker.ts'), ['thread via services/starter.ts'], 'a thread entry, by its starter');
  t.same(how('services/inner.ts'), [], 'a module loaded only through another production module is not covered');
  t.same(loadedBy.get('services/inner.ts'), ['test/unit/a.test.ts'], 'but the test is known to load it');
  t.same(how('projections/alone.ts'), [], 'a module no test reaches');

  const allow: AllowEntry[] = [
    { module: 'services/inner.ts', reason: 'through: services/outer.ts, which test/unit/a.test.ts calls' },
    { module: 'domain/typeOnly.ts', reason: 'types only: interfaces' },
    { module: 'domain/namedTypes.ts', reason: 'through: nothing, named by test/unit/gone.test.ts' },
    { module: 'domain/value.ts', reason: 'through: a stale entry, test/unit/a.test.ts' },
    { module: 'services/gone.ts', reason: 'through: a module since removed, test/unit/a.test.ts' },
    { module: 'services/viaHelper.ts', reason: 'because' },
  ];
  t.same(
    coverageProblems(dir, { covers, loadedBy }, allow),
    [
      'projections/alone.ts: no test imports it, and test/untested.json does not say why',
      'domain/typeOnly.ts: listed as "types only", but it has code that runs',
      'domain/namedTypes.ts: its reason names test/unit/gone.test.ts, which does not exist',
      'domain/value.ts: listed in test/untested.json, but test/unit/a.test.ts covers it now: take it off the list',
      'services/gone.ts: listed in test/untested.json, but there is no such module',
      'services/viaHelper.ts: listed in test/untested.json, but test/unit/a.test.ts covers it now: take it off the list',
      'services/viaHelper.ts: its reason must start with one of "types only: ", "entry point: ", "in a process: ", "through: "',
    ],
    'each problem named, and the true entry passes',
  );
  t.match(
    formatModuleTests({ covers, loadedBy }, allow),
    /services\/inner\.ts\n {2}no test: through: services\/outer\.ts, which test\/unit\/a\.test\.ts calls\n {2}loaded through other modules by 1 tests, nearest test\/unit\/a\.test\.ts/,
    'the printed map gives the reason and which tests load the module',
  );
});
