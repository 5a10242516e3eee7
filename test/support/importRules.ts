import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/**
 * The house rule (docs/architecture.md): imports point one way, contracts ← domain ← projections ← services and
 * contracts ← parser ← services; adapters are imported only by the composition roots (services/compose, and the
 * threads of services/threads that compose their stores) and tests.
 */
const LAYERS: Record<string, readonly string[]> = {
  contracts: ['contracts'],
  domain: ['contracts', 'domain'],
  projections: ['contracts', 'domain', 'projections'],
  parser: ['contracts', 'parser'],
  services: ['contracts', 'domain', 'projections', 'parser', 'services'],
};

const layerOf = (path: string) => path.split('/')[0];

/**
 * The write side's background workers and what they run on (docs/architecture.md#background-workers): none of them
 * imports the HTTP layer (services/api/), so a worker never depends on how a route renders an answer.
 */
const WORKER_FOLDERS = [
  'crawler',
  'dispatcher',
  'fairShare',
  'monitors/workers',
  'projector',
  'reactor',
  'searches/workers',
  'webhooks/workers',
];
const isWorker = (path: string) => WORKER_FOLDERS.some((f) => path.startsWith(`services/${f}/`));
const isAdapter = (path: string) => path.startsWith('services/adapters/');
const adapterPort = (path: string) => path.split('/')[2];

export interface Violation {
  file: string;
  imports: string;
  rule: string;
}

const specifiers = (source: string) =>
  [...source.matchAll(/(?:^|[\s;])(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)]
    .map((m) => m[1] ?? m[2])
    .filter((s): s is string => s !== undefined);

/** Every import of `files` (repository-relative path → source) that breaks the rule. */
export const importViolations = (files: ReadonlyMap<string, string>): Violation[] => {
  const out: Violation[] = [];
  for (const [file, source] of files) {
    const from = layerOf(file);
    const allowed = LAYERS[from];
    if (!allowed) continue;
    for (const spec of specifiers(source)) {
      if (file.startsWith('services/answers/') && /^(fastify|@fastify\/)/.test(spec)) {
        out.push({
          file,
          imports: spec,
          rule: 'answers are rendered without HTTP: services/answers never imports Fastify',
        });
      }
      if (!spec.startsWith('.')) continue;
      const target = normalize(join(dirname(file), spec));
      const to = layerOf(target);
      if (to === 'test') {
        out.push({ file, imports: target, rule: 'production code never imports tests' });
      } else if (LAYERS[to] && !allowed.includes(to)) {
        out.push({ file, imports: target, rule: `${from}/ may import only ${allowed.join(', ')}` });
      } else if (
        isAdapter(target) &&
        !file.startsWith('services/compose/') &&
        !file.startsWith('services/threads/') &&
        !(isAdapter(file) && adapterPort(file) === adapterPort(target))
      ) {
        out.push({
          file,
          imports: target,
          rule: 'adapters are imported only by services/compose, services/threads and tests',
        });
      } else if (isWorker(file) && target.startsWith('services/api/')) {
        out.push({ file, imports: target, rule: 'background workers never import the HTTP layer (services/api)' });
      } else if (file.startsWith('services/ports/') && to === 'services' && !target.startsWith('services/ports/')) {
        out.push({ file, imports: target, rule: 'a port names only contracts, projections and other ports' });
      }
    }
  }
  return out;
};

/** The repository's own TypeScript sources under the layered folders, keyed by repository-relative path. */
export const repositorySources = (root: string): Map<string, string> => {
  const files = new Map<string, string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name.endsWith('.ts')) files.set(relative(root, full), readFileSync(full, 'utf8'));
    }
  };
  for (const layer of Object.keys(LAYERS)) walk(join(root, layer));
  return files;
};
