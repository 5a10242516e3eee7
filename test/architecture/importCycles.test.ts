import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import madge from 'madge';
import t from 'tap';

/**
 * No import circles among the repository's own modules (docs/architecture.md): madge reads every import of the
 * TypeScript sources, type-only and dynamic ones included, and lists each cycle it finds.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const cyclesIn = async (dir: string, paths: string[]) => {
  const graph = await madge(paths, {
    baseDir: dir,
    fileExtensions: ['ts'],
    tsConfig: join(root, 'tsconfig.json'),
    detectiveOptions: { ts: { skipTypeImports: false }, tsx: { skipTypeImports: false } },
  });
  return { modules: Object.keys(graph.obj()).length, cycles: graph.circular() };
};

t.test('import cycles › none among the repository’s modules', async (t) => {
  const folders = ['contracts', 'domain', 'projections', 'parser', 'services', 'scripts', 'test'];
  const { modules, cycles } = await cyclesIn(
    root,
    folders.map((f) => join(root, f)),
  );
  t.ok(modules > 300, `read ${modules} modules`);
  t.same(
    cycles.map((c) => c.join(' → ')),
    [],
    'no module imports itself through others',
  );
});

t.test('import cycles › a planted cycle is found, through a type-only and a dynamic import', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-cycles-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'a.ts'), "import type { B } from './b.js';\nexport type A = B | 1;\n");
  writeFileSync(join(dir, 'b.ts'), "export type B = 2;\nexport const load = () => import('./c.js');\n");
  writeFileSync(join(dir, 'c.ts'), "import type { A } from './a.js';\nexport const c: A = 1;\n");
  writeFileSync(join(dir, 'd.ts'), "import { c } from './c.js';\nexport const d = c;\n");
  const { cycles } = await cyclesIn(dir, [dir]);
  t.same(
    cycles.map((c) => [...c].sort()),
    [['a.ts', 'b.ts', 'c.ts']],
    'the one cycle, and nothing for the module outside it',
  );
});
