import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { repositorySources } from '../support/importRules.js';
import { folderGroups, layerViolations, SERVICE_RANKS } from '../support/serviceLayers.js';

/**
 * services/ in layers (docs/architecture.md#folders): every folder has a rank, an import goes only to a lower rank,
 * so no two folders import each other, through others or not. Type-only and dynamic imports count.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const services = new Map([...repositorySources(root)].filter(([path]) => path.startsWith('services/')));
const show = (violations: ReturnType<typeof layerViolations>) =>
  violations.map((v) => `${v.file} → ${v.imports}: ${v.rule}`);

t.test('layers › every import of services/ goes to a lower rank', async (t) => {
  t.ok(services.size > 150, `read ${services.size} files of services/`);
  t.same(show(layerViolations(services)), [], 'no import against the ranks, and no folder without one');
});

t.test('layers › no two folders of services/ import each other', async (t) => {
  const groups = folderGroups(services);
  t.ok(groups.length >= 20, `${groups.length} folders`);
  t.same(
    groups.filter((g) => g.length > 1),
    [],
    'the largest group of folders that import each other is one folder',
  );
});

t.test('layers › a back-up import is caught, naming the file, the import and the rule', async (t) => {
  const planted = new Map([
    ['services/crawler/a.ts', "import type { AppDeps } from '../api/app.js';\nexport type A = AppDeps;\n"],
    ['services/ports/b.ts', "export const load = () => import('../threads/boot.js');\n"],
    ['services/geo/c.ts', "export { ANSWER } from '../answers/render.js';\n"],
    ['services/newFolder/d.ts', 'export const d = 1;\n'],
    ['services/e.ts', "import { f } from './threads/f.js';\nexport const e = f;\n"],
    ['services/api/routes/v1/usage.ts', "import { monitorRoutes } from '../../../monitors/http/monitors.js';\n"],
    ['services/monitors/commands/g.ts', "import type { R } from '../views/monitorReads.js';\nexport type G = R;\n"],
    ['services/monitors/loose.ts', 'export const loose = 1;\n'],
    ['services/webhooks/http/h.ts', "import type { MonitorService } from '../../monitors/commands/monitors.js';\n"],
    ['services/monitors/workers/i.ts', "export const load = () => import('../../webhooks/workers/sender.js');\n"],
  ]);
  t.same(
    show(layerViolations(planted)),
    [
      'services/crawler/a.ts → services/api/app.ts: services/crawler/ (rank 7) imports only lower ranks; services/api/app.ts is rank 14',
      'services/ports/b.ts → services/threads/boot.ts: services/ports/ (rank 0) imports only lower ranks; services/threads/ is rank 9',
      'services/geo/c.ts → services/answers/render.ts: services/geo/ (rank 1) imports only lower ranks; services/answers/ is rank 1',
      'services/newFolder/d.ts → : services/newFolder/ has no rank in the layer table (test/support/serviceLayers.ts)',
      'services/e.ts → services/threads/f.ts: services/*.ts (rank 0) imports only lower ranks; services/threads/ is rank 9',
      'services/api/routes/v1/usage.ts → services/monitors/http/monitors.ts: services/api/ (rank 11) imports only lower ranks; services/monitors/http/ is rank 12',
      'services/monitors/commands/g.ts → services/monitors/views/monitorReads.ts: services/monitors/commands/ (rank 6) imports only lower ranks; services/monitors/views/ is rank 6',
      'services/monitors/loose.ts → : services/monitors/ has no rank in the layer table (test/support/serviceLayers.ts)',
      'services/webhooks/http/h.ts → services/monitors/commands/monitors.ts: slices import each other only through shared layers; services/webhooks/http/ is in the webhooks slice, services/monitors/commands/ in the monitors slice',
      'services/monitors/workers/i.ts → services/webhooks/workers/sender.ts: slices import each other only through shared layers; services/monitors/workers/ is in the monitors slice, services/webhooks/workers/ in the webhooks slice',
    ],
    "a type-only, a dynamic and a re-export import against the ranks, the same rank, and a folder with no rank; in a slice: the shared HTTP layer reaching up into a slice's routes, a slice's commands reading its views, a file outside its kind's sub-folder, and one slice importing another even where the ranks allow it",
  );
});

t.test('layers › what the ranks allow is not reported', async (t) => {
  const fine = new Map([
    ['services/compose/a.ts', "import type { AppDeps } from '../api/app.js';\nimport { b } from './b.js';\n"],
    [
      'services/crawler/b.ts',
      "import type { PageParser } from '../ports/pageParser.js';\nimport { c } from '../buffers.js';\n",
    ],
    ['services/cli/c.ts', "const serve = () => import('../runtime/serve.js');\nimport { z } from 'zod';\n"],
    ['services/answers/d.ts', "import { ParsedSerp } from '../../contracts/result.js';\n"],
    [
      'services/monitors/http/e.ts',
      "import { errors } from '../../api/routes/v1/monitorErrors.js';\nimport type { MonitorService } from '../commands/monitors.js';\n",
    ],
    ['services/api/routes/v1/index.ts', "import { monitorRoutes } from '../../../monitors/http/monitors.js';\n"],
    ['services/monitors/workers/f.ts', "import { createMonitorVersions } from '../commands/monitorVersions.js';\n"],
    [
      'services/webhooks/http/g.ts',
      "import { errors } from '../../api/routes/v1/monitorErrors.js';\nimport { x } from '../../application/searches.js';\n",
    ],
    [
      'services/compose/h.ts',
      "import { createMonitorWorker } from '../monitors/workers/worker.js';\nimport { createWebhookWorker } from '../webhooks/workers/worker.js';\n",
    ],
  ]);
  t.same(show(layerViolations(fine)), [], 'no false alarm');
});

t.test('layers › a cycle between folders is found, through a type-only and a dynamic import', async (t) => {
  const planted = new Map([
    ['services/alpha/a.ts', "import type { B } from '../beta/b.js';\nexport type A = B;\n"],
    ['services/beta/b.ts', "export type B = 1;\nexport const load = () => import('../gamma/c.js');\n"],
    ['services/gamma/c.ts', "import type { A } from '../alpha/a.js';\nexport const c: A = 1;\n"],
    ['services/delta/d.ts', "import { c } from '../gamma/c.js';\nexport const d = c;\n"],
  ]);
  t.same(
    folderGroups(planted).filter((g) => g.length > 1),
    [['alpha', 'beta', 'gamma']],
    'the one group, and not the folder that only imports it',
  );
});

t.test('layers › docs/architecture.md shows the same table', async (t) => {
  const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
  const m = /<!-- layers:begin -->([\s\S]*?)<!-- layers:end -->/.exec(doc);
  t.ok(m, 'docs/architecture.md has a table between <!-- layers:begin --> and <!-- layers:end -->');
  const shown = (m?.[1] ?? '')
    .split('\n')
    .filter((line) => /^\| \d+ \|/.test(line))
    .map((line) => {
      const [rank, folders] = line.split('|').slice(1, 3);
      return {
        rank: Number(rank),
        folders: [...(folders ?? '').matchAll(/`([^`]+?)\/?`/g)].map((f) => f[1]).sort(),
      };
    });
  t.same(
    shown,
    SERVICE_RANKS.map(({ rank, folders }) => ({ rank, folders: [...folders].sort() })),
    'each rank with the same folders as test/support/serviceLayers.ts',
  );
});
