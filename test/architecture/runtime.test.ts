import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

/**
 * docs/architecture.md stays true: the files its table names exist, they are the only files of the service that start
 * a thread or a child process, every thread `startThread` starts is in the table, and env.ts is the only reader of
 * process.env.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');

const sources = (dir: string): string[] =>
  readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return sources(path);
    return /\.(ts|js|mjs)$/.test(name) ? [path] : [];
  });
const service = [...sources('services'), ...sources('bin')].map((p) => relative('.', p));
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** the rows of the table between the `starts` markers: [file, starts, code, protocol] */
const rows = (() => {
  const m = /<!-- starts:begin -->([\s\S]*?)<!-- starts:end -->/.exec(doc);
  if (!m) throw new Error('docs/architecture.md has no <!-- starts:begin --> table');
  return m[1]
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
})();
const pathsIn = (cell: string) => [...cell.matchAll(/`((?:services|bin)\/[^`]+\.(?:ts|js))`/g)].map((m) => m[1]);

t.test('architecture › every file the table names exists', async (t) => {
  t.ok(rows.length >= 6, `${rows.length} rows`);
  for (const row of rows) for (const path of pathsIn(row.join(' '))) t.ok(existsSync(join(root, path)), path);
});

t.test('architecture › the table’s files are the only ones that start threads or child processes', async (t) => {
  const starters = service.filter((path) => {
    const source = read(path);
    return /new Worker\(|new Piscina\(|from 'node:child_process'|\bstartThread\('/.test(source);
  });
  t.same(starters.sort(), rows.map((row) => pathsIn(row[0])[0]).sort(), 'docs/architecture.md names them all');
});

t.test(
  'architecture › every thread started is a *Worker.ts of services/threads or services/runtime the table names',
  async (t) => {
    const started = service.flatMap((path) =>
      [...read(path).matchAll(/(?:startThread|threadEntry)\('([A-Za-z]+\/[A-Za-z]+)'/g)].map((m) => m[1]),
    );
    t.ok(started.length >= 4, `started: ${started.join(', ')}`);
    const named = rows.flatMap((row) => pathsIn(row[2]));
    for (const name of new Set(started)) {
      t.ok(named.includes(`services/${name}.ts`), `${name}.ts is in the table`);
    }
    const workers = [...sources('services/threads'), ...sources('services/runtime')].filter((p) =>
      p.endsWith('Worker.ts'),
    );
    t.same(workers.sort(), [...new Set(started)].map((n) => `services/${n}.ts`).sort(), 'and each is started');
  },
);

t.test('architecture › services/config/env.ts is the only reader of process.env', async (t) => {
  const readers = service.filter((path) => /process\.env\b/.test(read(path).replace(/\/\/.*|\/\*[\s\S]*?\*\//g, '')));
  t.same(readers, ['services/config/env.ts']);
});
