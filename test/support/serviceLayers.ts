import { dirname, join, normalize } from 'node:path';
import ts from 'typescript';

/**
 * The layers of services/ (docs/architecture.md#folders): every unit has a rank, and a file imports only files of
 * its own unit or of a unit with a lower rank (ports/ is rank 0, so every unit may import a port). Type-only and
 * dynamic imports count. A unit is the longest entry of this table a file's path starts with: a folder (`api`), a
 * slice's sub-folder (`monitors/http`) or one file (`api/app.ts`); the files directly under services/ are one unit,
 * `*.ts`. This table is the one the test holds the code to; docs/architecture.md shows it between its `layers`
 * markers, and the test checks that they agree.
 */
export const SERVICE_RANKS: ReadonlyArray<{ rank: number; folders: readonly string[] }> = [
  { rank: 0, folders: ['ports', 'config', 'client', 'export', '*.ts'] },
  { rank: 1, folders: ['adapters', 'answers', 'geo', 'mcp', 'render'] },
  { rank: 2, folders: ['projector'] },
  { rank: 3, folders: ['reactor'] },
  { rank: 4, folders: ['fairShare'] },
  { rank: 5, folders: ['application'] },
  { rank: 6, folders: ['monitors/commands', 'monitors/views', 'searches/commands', 'webhooks/commands'] },
  { rank: 7, folders: ['crawler', 'dispatcher'] },
  { rank: 8, folders: ['monitors/workers', 'searches/workers', 'webhooks/workers'] },
  { rank: 9, folders: ['threads'] },
  { rank: 10, folders: ['metrics'] },
  { rank: 11, folders: ['api'] },
  { rank: 12, folders: ['monitors/http', 'searches/http', 'webhooks/http'] },
  { rank: 13, folders: ['api/routes/v1/index.ts'] },
  { rank: 14, folders: ['api/app.ts'] },
  { rank: 15, folders: ['api/server.ts'] },
  { rank: 16, folders: ['compose'] },
  { rank: 17, folders: ['runtime'] },
  { rank: 18, folders: ['cli'] },
];

/**
 * The vertical slices (docs/architecture.md#slices): a feature's folder, whose sub-folders each carry the rank of
 * their kind (`http` above the HTTP layer's shared parts, `commands` and `views` above application/, `workers` above
 * the fleet's workers, which the crawl worker drives). A slice imports another slice only through a lower shared
 * layer, never directly.
 */
export const SLICES: readonly string[] = ['monitors', 'searches', 'webhooks'];

const rankOf = new Map(SERVICE_RANKS.flatMap(({ rank, folders }) => folders.map((f) => [f, rank] as const)));
const entries = [...rankOf.keys()].sort((a, b) => b.length - a.length);

/**
 * the unit of a services/ file: the longest table entry its path (under services/) starts with, `*.ts` for a file
 * directly in services/, else its first folder (which then has no rank, and is reported)
 */
export const unitOf = (path: string): string | undefined => {
  const parts = path.split('/');
  if (parts[0] !== 'services' || parts.length < 2) return undefined;
  if (parts.length === 2) return '*.ts';
  const inner = parts.slice(1).join('/');
  return entries.find((e) => e !== '*.ts' && (inner === e || inner.startsWith(`${e}/`))) ?? parts[1];
};

/** the slice a unit belongs to, if any */
const sliceOf = (unit: string) => SLICES.find((s) => unit === s || unit.startsWith(`${s}/`));

/** `services/x/` for a folder, `services/x.ts` for a file, `services/*.ts` for the files directly under services/ */
const shown = (unit: string) =>
  unit === '*.ts' ? 'services/*.ts' : unit.endsWith('.ts') ? `services/${unit}` : `services/${unit}/`;

/**
 * Every repository path `file` imports (static, type-only, `export … from`, dynamic), read with the TypeScript
 * compiler's own pre-processor, so no form of import is missed by a hand-written pattern.
 */
export const importsOf = (file: string, source: string): string[] =>
  ts
    .preProcessFile(source, true, true)
    .importedFiles.map((f) => f.fileName)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => normalize(join(dirname(file), spec)).replace(/\.js$/, '.ts'));

export interface LayerViolation {
  file: string;
  imports: string;
  rule: string;
}

/** Every import between services/ folders, of `files` (repository-relative path → source), that goes against the ranks. */
export const layerViolations = (files: ReadonlyMap<string, string>): LayerViolation[] => {
  const out: LayerViolation[] = [];
  for (const [file, source] of files) {
    const from = unitOf(file);
    if (from === undefined) continue;
    const fromRank = rankOf.get(from);
    if (fromRank === undefined) {
      out.push({
        file,
        imports: '',
        rule: `${shown(from)} has no rank in the layer table (test/support/serviceLayers.ts)`,
      });
      continue;
    }
    for (const target of importsOf(file, source)) {
      const to = unitOf(target);
      if (to === undefined || to === from) continue;
      const toRank = rankOf.get(to);
      const [fromSlice, toSlice] = [sliceOf(from), sliceOf(to)];
      if (toRank === undefined) {
        out.push({ file, imports: target, rule: `${shown(to)} has no rank in the layer table` });
      } else if (fromSlice !== undefined && toSlice !== undefined && fromSlice !== toSlice) {
        out.push({
          file,
          imports: target,
          rule: `slices import each other only through shared layers; ${shown(from)} is in the ${fromSlice} slice, ${shown(to)} in the ${toSlice} slice`,
        });
      } else if (toRank >= fromRank) {
        out.push({
          file,
          imports: target,
          rule: `${shown(from)} (rank ${fromRank}) imports only lower ranks; ${shown(to)} is rank ${toRank}`,
        });
      }
    }
  }
  return out;
};

/**
 * The groups of services/ units that import each other, directly or through others (strongly connected components of
 * the unit graph, Tarjan's algorithm), largest first; a folder on its own is a group of 1.
 */
export const folderGroups = (files: ReadonlyMap<string, string>): string[][] => {
  const edges = new Map<string, Set<string>>();
  for (const [file, source] of files) {
    const from = unitOf(file);
    if (from === undefined) continue;
    if (!edges.has(from)) edges.set(from, new Set());
    for (const target of importsOf(file, source)) {
      const to = unitOf(target);
      if (to !== undefined && to !== from) edges.get(from)?.add(to);
    }
  }
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
      }
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string | undefined;
      do {
        w = stack.pop();
        if (w === undefined) break;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      groups.push(group.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return groups.sort((a, b) => b.length - a.length);
};
