import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, normalize, relative } from 'node:path';

/**
 * The repository documents itself (docs/style.md#code): a source file cites `docs/…`, never an issue number, the
 * design or style notes the project started from, or a document outside the repository; every `docs/…` path it cites
 * exists, with the section its anchor names; the README stays short and links every document in `docs/`.
 */

export interface Finding {
  file: string;
  line: number;
  problem: string;
}

/** Citations of what is not in the repository: the starting notes, issue numbers, the shared reference documents. */
const FORBIDDEN: ReadonlyArray<[RegExp, string]> = [
  [
    /\b(?:DESIGN|STYLE)\.md\b/,
    'cites a design or style note outside the repository: cite docs/design.md or docs/style.md',
  ],
  [/\b[Ii]ssue #?\d/, 'cites an issue number: cite the docs/ section that explains it, or let the comment stand alone'],
  [
    /serpapi-reference\.md|google-serp-markup\.md|service-spec\.md|shared\/(?:docs|spec)\//,
    'cites a document outside the repository: cite docs/…',
  ],
];

/** A bare `docs/….md` path, with its `#anchor` if any (not a path inside another folder or a URL). */
const DOC_CITATION = /(?<![\w/.-])docs\/([\w./-]+?\.md)(#[\w-]+)?/g;

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

/** Lines outside fenced code blocks, with their 1-based numbers. */
const prose = (markdown: string): Array<[number, string]> => {
  const out: Array<[number, string]> = [];
  let fenced = false;
  markdown.split('\n').forEach((text, i) => {
    if (/^\s*```/.test(text)) fenced = !fenced;
    else if (!fenced) out.push([i + 1, text]);
  });
  return out;
};

/** Every anchor a markdown document offers, repeated headings numbered as GitHub numbers them. */
export const anchorsOf = (markdown: string): Set<string> => {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, text] of prose(markdown)) {
    const m = /^#{1,6}\s+(.*)$/.exec(text);
    if (!m?.[1]) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
};

/** Reads a repository file, or undefined when it does not exist. */
export type ReadRepoFile = (path: string) => string | undefined;

const checkTarget = (read: ReadRepoFile, target: string, anchor: string | undefined): string | undefined => {
  const text = read(target);
  if (text === undefined) return `${target} does not exist`;
  if (anchor && target.endsWith('.md') && !anchorsOf(text).has(anchor)) return `${target} has no section #${anchor}`;
  return undefined;
};

/** What a source file (code, tests, scripts, deploy files, package.json) cites that it should not, or that is gone. */
export const sourceFindings = (files: ReadonlyMap<string, string>, read: ReadRepoFile): Finding[] => {
  const out: Finding[] = [];
  for (const [file, text] of files) {
    text.split('\n').forEach((line, i) => {
      for (const [re, problem] of FORBIDDEN) if (re.test(line)) out.push({ file, line: i + 1, problem });
      for (const m of line.matchAll(DOC_CITATION)) {
        const missing = checkTarget(read, `docs/${m[1]}`, m[2]?.slice(1));
        if (missing) out.push({ file, line: i + 1, problem: `cites ${m[0]}, but ${missing}` });
      }
    });
  }
  return out;
};

/** Broken relative links of a markdown document (`file` is repository-relative), anchors included. */
export const linkFindings = (file: string, markdown: string, read: ReadRepoFile): Finding[] => {
  const out: Finding[] = [];
  for (const [line, text] of prose(markdown)) {
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const href = m[1] ?? '';
      if (/^[a-z]+:/i.test(href)) continue;
      const [path = '', anchor] = href.split('#');
      const target = path === '' ? file : normalize(join(dirname(file), path));
      const missing = path === '' ? checkTarget(() => markdown, file, anchor) : checkTarget(read, target, anchor);
      if (missing) out.push({ file, line, problem: `links ${href}, but ${missing}` });
    }
  }
  return out;
};

/** The README's own rules: at most `maxLines` lines, and a link to every document of `docs/`. */
export const readmeFindings = (readme: string, docs: readonly string[], maxLines = 200): Finding[] => {
  const out: Finding[] = [];
  const lines = readme.replace(/\n$/, '').split('\n').length;
  if (lines > maxLines) out.push({ file: 'README.md', line: lines, problem: `has ${lines} lines, over ${maxLines}` });
  const linked = new Set([...readme.matchAll(/\]\((docs\/[^)#\s]+)/g)].map((m) => normalize(m[1] ?? '')));
  for (const doc of docs) {
    if (!linked.has(doc)) out.push({ file: 'README.md', line: 1, problem: `does not link ${doc}` });
  }
  return out;
};

const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'docs', '.git', '.data', '.cluster', '.artifacts', '.tap']);
const SKIPPED_FILES = new Set(['README.md', 'package-lock.json']);
const TEXT = new Set(['', '.ts', '.mts', '.cts', '.js', '.mjs', '.cjs', '.json', '.yaml', '.yml', '.sh', '.conf']);
const TEXT_TOO = new Set(['.css', '.html', '.toml', '.txt', '.md']);

/** The repository's source files (everything but the documents, dependencies, builds and data), keyed by path. */
export const repositoryFiles = (root: string): Map<string, string> => {
  const files = new Map<string, string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) {
        if (!SKIPPED_DIRS.has(name)) walk(full);
      } else if (!SKIPPED_FILES.has(name) && (TEXT.has(extname(name)) || TEXT_TOO.has(extname(name)))) {
        files.set(relative(root, full), readFileSync(full, 'utf8'));
      }
    }
  };
  walk(root);
  return files;
};

/** Reads files under `root`, as the checks need them. */
export const reader =
  (root: string): ReadRepoFile =>
  (path) => {
    const full = join(root, path);
    return existsSync(full) && statSync(full).isFile() ? readFileSync(full, 'utf8') : undefined;
  };
