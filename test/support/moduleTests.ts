import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * Which test covers which module (docs/testing.md#which-test-covers-each-module): every module of services/, domain/
 * and projections/ is imported by a test, or is on test/untested.json with the reason it has none.
 *
 * A test covers a module when it reaches it without going through other production code:
 * - a value import of it (`import`, `export … from`, a side-effect import), in the test file or in a helper of test/
 *   the test imports (test/support/service.ts, …); `import type`, and named imports that all resolve to types
 *   (asked of the compiler), do not count: they vanish when the test runs;
 * - a dynamic `import('…')` of it, or a path to it built with `new URL('…', import.meta.url)` (a module a test loads in
 *   a child process or a thread of its own);
 * - a thread entry (a `*Worker.ts` file) is covered by the tests that cover the module starting it by name
 *   (`startThread('threads/writerWorker')`, `threadEntry('threads/parseWorker')`): the only way it ever runs.
 */

/** the folders whose modules must each have a test */
export const COVERED_FOLDERS = ['services', 'domain', 'projections'] as const;

export type How = 'import' | 'dynamic import' | 'path' | 'thread';

export interface Cover {
  /** the test file (repository-relative) */
  test: string;
  how: How;
  /** the helper of test/ the import goes through, or the module that starts the thread */
  via?: string;
}

export interface AllowEntry {
  module: string;
  reason: string;
}

const tsFiles = (root: string, dir: string): string[] =>
  (existsSync(join(root, dir)) ? readdirSync(join(root, dir)) : []).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return tsFiles(root, path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });

/** every module that must be covered, repository-relative */
export const productionModules = (root: string): string[] =>
  COVERED_FOLDERS.flatMap((folder) => tsFiles(root, folder)).sort();

/** test/'s own runner fixtures are tap files for the runner's tests, not tests of the service */
const isTestTree = (path: string) => path.startsWith('test/') && !path.startsWith('test/support/runnerFixtures/');
const isTestFile = (path: string) => isTestTree(path) && path.endsWith('.test.ts');

interface Edge {
  to: string;
  how: Exclude<How, 'thread'>;
}

/** a relative specifier of `from`, as a repository-relative `.ts` path */
const resolveSpecifier = (root: string, from: string, spec: string): string | undefined => {
  if (!spec.startsWith('.')) return undefined;
  const path = relative(root, resolve(root, dirname(from), spec));
  return path.replace(/\.js$/, '.ts');
};

/** true when the import or export clause brings in at least one value (the compiler says what each name is) */
const bringsValue = (checker: ts.TypeChecker, node: ts.ImportDeclaration | ts.ExportDeclaration): boolean => {
  const isValue = (name: ts.ModuleExportName) => {
    const symbol = checker.getSymbolAtLocation(name);
    if (!symbol) return true;
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    return (target.flags & ts.SymbolFlags.Value) !== 0;
  };
  if (ts.isImportDeclaration(node)) {
    const clause = node.importClause;
    if (!clause) return true;
    if (clause.isTypeOnly) return false;
    if (clause.name && isValue(clause.name)) return true;
    const bindings = clause.namedBindings;
    if (!bindings) return false;
    if (ts.isNamespaceImport(bindings)) return true;
    return bindings.elements.some((e) => !e.isTypeOnly && isValue(e.name));
  }
  if (node.isTypeOnly) return false;
  const clause = node.exportClause;
  if (!clause || ts.isNamespaceExport(clause)) return true;
  return clause.elements.some((e) => !e.isTypeOnly && isValue(e.name));
};

/** the modules of the repository that a file reaches directly, and how */
const edgesOf = (root: string, checker: ts.TypeChecker, file: ts.SourceFile): Edge[] => {
  const from = relative(root, file.fileName);
  const edges: Edge[] = [];
  const add = (spec: string, how: Edge['how']) => {
    const to = resolveSpecifier(root, from, spec);
    if (to) edges.push({ to, how });
  };
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier) && bringsValue(checker, node))
        add(node.moduleSpecifier.text, 'import');
      return;
    }
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) add(arg.text, 'dynamic import');
    }
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'URL') {
      const [arg, base] = node.arguments ?? [];
      if (arg && ts.isStringLiteralLike(arg) && base?.getText(file) === 'import.meta.url') add(arg.text, 'path');
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return edges;
};

/** thread entry → the modules that start it by name */
const threadStarters = (root: string, modules: readonly string[]): Map<string, string[]> => {
  const starters = new Map<string, string[]>();
  for (const m of modules) {
    const source = ts.sys.readFile(join(root, m)) ?? '';
    // the name is the entry's path without `.ts` (`threads/writerWorker`), or its file's name alone
    for (const [, name] of source.matchAll(/\b(?:startThread|threadEntry)\(\s*'([A-Za-z/]+)'/g)) {
      const entries = modules.filter((e) => e.endsWith(`/${name}.ts`));
      if (entries.length !== 1) {
        throw new Error(`${m} starts thread '${name}': ${entries.length} modules end with that path`);
      }
      starters.set(entries[0], [...(starters.get(entries[0]) ?? []), m]);
    }
  }
  return starters;
};

export interface ModuleTests {
  /** module → the tests that cover it, for every module of `COVERED_FOLDERS` (an empty list: no test covers it) */
  covers: Map<string, Cover[]>;
  /** module → the tests that load it at all, through other production modules too (what an allow-list reason cites) */
  loadedBy: Map<string, string[]>;
}

/** Which tests cover which module. Reads every file of test/ and what it imports through the compiler (seconds). */
export const moduleTests = (root: string): ModuleTests => {
  const modules = productionModules(root);
  const testTree = tsFiles(root, 'test').filter(isTestTree);
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    noLib: true,
    types: [],
  };
  // only the repository's own modules matter: packages and their types are read as empty files (a quarter of the
  // time and memory of reading them)
  const host = ts.createCompilerHost(options);
  const readSource = host.getSourceFile;
  host.getSourceFile = (fileName, language, ...rest) =>
    fileName.includes('/node_modules/')
      ? ts.createSourceFile(fileName, '', language)
      : readSource.call(host, fileName, language, ...rest);
  const program = ts.createProgram(
    testTree.map((f) => join(root, f)),
    options,
    host,
  );
  const checker = program.getTypeChecker();
  const edges = new Map<string, Edge[]>();
  for (const source of program.getSourceFiles()) {
    const f = relative(root, source.fileName);
    if (!f.startsWith('..') && !f.startsWith('node_modules/')) edges.set(f, edgesOf(root, checker, source));
  }

  const covers = new Map<string, Cover[]>(modules.map((m) => [m, []]));
  const add = (module: string, cover: Cover) => {
    const list = covers.get(module);
    if (list && !list.some((c) => c.test === cover.test)) list.push(cover);
  };
  for (const test of testTree.filter(isTestFile)) {
    // the test's own imports first, then its helpers' (breadth first: the shortest way is the one named)
    const seen = new Set([test]);
    const queue: { file: string; via?: string }[] = [{ file: test }];
    while (queue.length > 0) {
      const { file, via } = queue.shift()!;
      for (const edge of edges.get(file) ?? []) {
        if (isTestTree(edge.to) && !isTestFile(edge.to)) {
          if (!seen.has(edge.to)) {
            seen.add(edge.to);
            queue.push({ file: edge.to, via: via ?? edge.to });
          }
        } else add(edge.to, { test, how: edge.how, ...(via ? { via } : {}) });
      }
    }
  }
  for (const [entry, starters] of threadStarters(root, modules)) {
    for (const starter of starters) {
      for (const c of covers.get(starter) ?? []) add(entry, { test: c.test, how: 'thread', via: starter });
    }
  }
  for (const list of covers.values()) list.sort((a, b) => a.test.localeCompare(b.test));

  // every module each test loads at all, nearest first (breadth first, through production modules too)
  const depths = new Map<string, { test: string; depth: number }[]>(modules.map((m) => [m, []]));
  for (const test of testTree.filter(isTestFile)) {
    const seen = new Set([test]);
    let layer = [test];
    for (let depth = 1; layer.length > 0; depth++) {
      const next: string[] = [];
      for (const file of layer) {
        for (const { to } of edges.get(file) ?? []) {
          if (seen.has(to) || isTestFile(to)) continue;
          seen.add(to);
          next.push(to);
          depths.get(to)?.push({ test, depth });
        }
      }
      layer = next;
    }
  }
  const loadedBy = new Map(
    [...depths].map(([m, list]) => [
      m,
      list.sort((a, b) => a.depth - b.depth || a.test.localeCompare(b.test)).map((x) => x.test),
    ]),
  );
  return { covers, loadedBy };
};

/**
 * Why a module may have no test of its own: every reason starts with one of these, then `: ` and the rest.
 * - `types only`: the module compiles to nothing (checked: its JavaScript is empty);
 * - `entry point`: the first module of a process, run by the tests that start that process (named in the reason);
 * - `in a process`: code that runs only inside a process a test starts (the service, the CLI), named in the reason;
 * - `through`: code reached only through another module, in the process of the tests the reason names (checked:
 *   those tests load it).
 */
export const REASON_KINDS = ['types only', 'entry point', 'in a process', 'through'] as const;
export type ReasonKind = (typeof REASON_KINDS)[number];

export const kindOf = (reason: string): ReasonKind | undefined => REASON_KINDS.find((k) => reason.startsWith(`${k}: `));

/** true when the module has no code that runs: interfaces, type aliases, type-only imports and module augmentations */
export const isTypesOnly = (source: string): boolean => {
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, removeComments: true },
  }).outputText;
  return js.replace(/export \{\};?/g, '').trim() === '';
};

/**
 * What the check fails on: a module no test covers and the allow-list does not name, and each entry of the
 * allow-list that is stale (its module is gone, or a test covers it now), listed twice, or not true as far as the
 * check can tell: a reason of no known kind, a `types only` module with code, a test named that does not exist, or
 * (for `through`) a test named that never loads the module.
 */
export const coverageProblems = (
  root: string,
  { covers, loadedBy }: ModuleTests,
  allow: readonly AllowEntry[],
): string[] => {
  const allowed = new Map(allow.map((e) => [e.module, e]));
  const problems: string[] = [];
  for (const [module, list] of covers) {
    if (list.length === 0 && !allowed.has(module)) {
      problems.push(`${module}: no test imports it, and test/untested.json does not say why`);
    }
  }
  const seen = new Set<string>();
  for (const { module, reason } of allow) {
    if (seen.has(module)) problems.push(`${module}: listed twice in test/untested.json`);
    seen.add(module);
    const list = covers.get(module);
    if (!list) {
      problems.push(`${module}: listed in test/untested.json, but there is no such module`);
      continue;
    }
    if (list.length > 0) {
      problems.push(`${module}: listed in test/untested.json, but ${list[0].test} covers it now: take it off the list`);
    }
    const kind = kindOf(reason);
    if (!kind) {
      problems.push(`${module}: its reason must start with one of ${REASON_KINDS.map((k) => `"${k}: "`).join(', ')}`);
      continue;
    }
    if (kind === 'types only') {
      if (!isTypesOnly(readFileSync(join(root, module), 'utf8'))) {
        problems.push(`${module}: listed as "types only", but it has code that runs`);
      }
      continue;
    }
    const named = [...reason.matchAll(/\btest\/[\w./-]+\.test\.ts\b/g)].map((m) => m[0]);
    if (named.length === 0) problems.push(`${module}: its reason names no test file that exercises it`);
    for (const test of named) {
      if (!existsSync(join(root, test))) problems.push(`${module}: its reason names ${test}, which does not exist`);
      else if (kind === 'through' && !(loadedBy.get(module) ?? []).includes(test)) {
        problems.push(`${module}: its reason names ${test}, which never loads it`);
      }
    }
  }
  return problems;
};

/** the map as a reader wants it: each module, then the tests that cover it (and how), or the allow-list's reason */
export const formatModuleTests = ({ covers, loadedBy }: ModuleTests, allow: readonly AllowEntry[]): string => {
  const reasons = new Map(allow.map((e) => [e.module, e.reason]));
  const lines: string[] = [];
  for (const [module, list] of covers) {
    lines.push(module);
    if (list.length === 0) {
      lines.push(`  no test: ${reasons.get(module) ?? 'NOT ON THE ALLOW-LIST'}`);
      const loaded = loadedBy.get(module) ?? [];
      if (loaded.length > 0)
        lines.push(`  loaded through other modules by ${loaded.length} tests, nearest ${loaded[0]}`);
    }
    for (const c of list) {
      const how = c.how === 'import' ? '' : ` (${c.how})`;
      lines.push(`  ${c.test}${how}${c.via ? ` via ${c.via}` : ''}`);
    }
  }
  return lines.join('\n');
};
