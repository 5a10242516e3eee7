import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { importViolations, repositorySources } from '../support/importRules.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

t.test('imports point one way › the repository follows the rule', async (t) => {
  const files = repositorySources(root);
  t.ok(files.size > 100, `read ${files.size} source files`);
  const violations = importViolations(files);
  t.same(
    violations.map((v) => `${v.file} → ${v.imports}: ${v.rule}`),
    [],
    'no import breaks the layering',
  );
});

t.test('imports point one way › a planted violation of each kind is caught', async (t) => {
  const planted = new Map([
    ['contracts/x.ts', "import { decide } from '../domain/searchJob/searchJob.js';"],
    ['domain/y.ts', "import type { JobStatusDoc } from '../projections/jobStatus/jobStatus.js';"],
    ['projections/z.ts', "import { parse } from '../parser/index.js';"],
    ['parser/w.ts', "import { app } from '../services/api/app.js';"],
    ['parser/v.ts', "export { startEmbedded } from '../services/compose/embedded.js';"],
    ['services/api/u.ts', "const m = await import('../adapters/eventStore/sqlite.js');"],
    ['services/crawler/s.ts', "import { readFixture } from '../../test/support/fixtures.js';"],
    ['services/ports/r.ts', "import type { Crawler } from '../crawler/crawl.js';"],
    ['services/webhooks/workers/q.ts', "import { failureOfJob } from '../../api/render/failure.js';"],
    ['services/answers/p.ts', "import type { FastifyReply } from 'fastify';"],
  ]);
  const found = importViolations(planted).map((v) => v.file);
  t.same(found.sort(), [...planted.keys()].sort(), 'every planted file is reported');
});

t.test('imports point one way › what the rule allows is not reported', async (t) => {
  const fine = new Map([
    ['parser/a.ts', "import type { ParsedSerp } from '../contracts/result.js';"],
    ['services/compose/b.ts', "import { createSqliteEventStore } from '../adapters/eventStore/sqlite.js';"],
    ['services/adapters/fetcher/c.ts', "import { mergeCookies } from './cookies.js';"],
    ['services/api/d.ts', "import { toCompat } from '../../parser/index.js';\nimport { z } from 'zod';"],
    ['services/ports/e.ts', "import type { DocReader } from '../../projections/projection.js';"],
  ]);
  t.same(importViolations(fine), [], 'no false alarm');
});
