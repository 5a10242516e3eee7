import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { slug } from './docsRules.js';

/**
 * Reading what a document lists, so that a test can hold it against what the code defines (docs/testing.md#the-documents):
 * a section's table, a section's code block, the code spans of a cell, a folder tree, the `SERP_*` names in a text.
 * Each comparison names what is missing from the document and what it lists that the code does not define.
 */

/** The lines of a section: from the heading whose anchor is `anchor` to the next heading of its level or above. */
export const sectionOf = (markdown: string, anchor: string): string[] | undefined => {
  const lines = markdown.split('\n');
  let fenced = false;
  let start = -1;
  let level = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const m = /^(#{1,6})\s+(.*)$/.exec(line);
    if (!m) continue;
    const depth = m[1]?.length ?? 0;
    if (start >= 0 && depth <= level) return lines.slice(start + 1, i);
    if (start < 0 && slug(m[2] ?? '') === anchor) {
      start = i;
      level = depth;
    }
  }
  return start >= 0 ? lines.slice(start + 1) : undefined;
};

/** Splits a table row into its cells (a `\|` inside a cell is a character, not a border). */
const cellsOf = (row: string): string[] =>
  row
    .split(/(?<!\\)\|/)
    .slice(1, -1)
    .map((cell) => cell.replaceAll('\\|', '|').trim());

/**
 * The body rows of the first table of a section, as cells (header and separator dropped); undefined when the section
 * or its table is missing. `header` picks the first table whose first header cell is that word.
 */
export const tableOf = (markdown: string, anchor: string, header?: string): string[][] | undefined => {
  const section = sectionOf(markdown, anchor);
  if (!section) return undefined;
  for (let i = 0; i < section.length; i++) {
    if (!section[i]?.startsWith('|')) continue;
    let end = i;
    while (section[end]?.startsWith('|')) end++;
    const rows = section.slice(i, end);
    if (header === undefined || cellsOf(rows[0] ?? '')[0] === header) return rows.slice(2).map(cellsOf);
    i = end;
  }
  return undefined;
};

/** The first fenced code block of a section, without its fences. */
export const codeBlockOf = (markdown: string, anchor: string): string | undefined => {
  const section = sectionOf(markdown, anchor);
  const open = section?.findIndex((line) => /^\s*```/.test(line)) ?? -1;
  if (!section || open < 0) return undefined;
  const close = section.findIndex((line, i) => i > open && /^\s*```/.test(line));
  return section.slice(open + 1, close < 0 ? undefined : close).join('\n');
};

/** The inline code spans of a text: `a` and `b` of "`a`, then `b`". */
export const codeSpans = (text: string): string[] => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');

/**
 * What a document's list lacks and what it lists in vain, against what the code defines: one line each, naming the
 * document's list (`what`) and the name.
 */
export const listFindings = (what: string, listed: Iterable<string>, defined: Iterable<string>): string[] => {
  const doc = new Set(listed);
  const code = new Set(defined);
  return [
    ...[...code].filter((n) => !doc.has(n)).map((n) => `${what} lacks ${n}`),
    ...[...doc].filter((n) => !code.has(n)).map((n) => `${what} lists ${n}, which the code does not define`),
  ].sort();
};

/**
 * The folders a tree block lists, by parent. A line at column 0 that starts with folder names (`contracts/`,
 * `public/admin/`) lists top-level folders (parent ''); the last of them is the parent of the lines below it indented
 * by exactly two spaces, whose leading folder names (`api/ application/ crawler/`) are its children. Words after two
 * or more spaces are a description; deeper-indented lines continue one.
 */
export const treeOf = (block: string): Map<string, string[]> => {
  const tree = new Map<string, string[]>();
  const add = (parent: string, names: string[]) => tree.set(parent, [...(tree.get(parent) ?? []), ...names]);
  let parent: string | undefined;
  for (const line of block.split('\n')) {
    const m = /^( {0,2})((?:[\w-]+(?:\/[\w-]+)*\/ ?)+)/.exec(line);
    if (!m || m[1] === ' ') continue;
    const names = (m[2] ?? '')
      .trim()
      .split(' ')
      .map((n) => n.replace(/\/$/, ''));
    if (m[1] === '') {
      add('', names);
      parent = names.at(-1);
    } else if (parent !== undefined) {
      add(parent, names);
    }
  }
  return tree;
};

/** The folders directly inside `dir` (under `root`), hidden ones and dependencies left out. */
export const foldersOf = (root: string, dir: string): string[] =>
  readdirSync(join(root, dir))
    .filter((name) => !name.startsWith('.') && name !== 'node_modules' && name !== 'dist')
    .filter((name) => statSync(join(root, dir, name)).isDirectory())
    .sort();

/** Every `SERP_…` name a text mentions (a variable, an error code, a stream), without templates like `SERP_<AREA>`. */
export const serpNames = (text: string): Set<string> =>
  new Set([...text.matchAll(/\bSERP_[A-Z0-9_]*[A-Z0-9]\b/g)].map((m) => m[0]));

/** An OpenAPI operation as the route tables name it: `POST /v1/search`, `GET /v1/search/{job_id}`. */
export const operationName = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

/** The route a cell names (`GET /v1/search/{job_id}?output=…` → `GET /v1/search/{job_id}`), or undefined. */
export const routeIn = (span: string): string | undefined => {
  const m = /^(GET|POST|PUT|PATCH|DELETE) (\/[^\s?]*)/.exec(span);
  return m ? operationName(m[1] ?? '', m[2] ?? '') : undefined;
};

/** The field names of a body as a table writes it: `{tier, label?, monthly_quota?}` → tier, label, monthly_quota. */
export const bodyFields = (cell: string): string[] => {
  const span = codeSpans(cell).find((s) => s.startsWith('{'));
  if (!span) return [];
  return span
    .slice(1, -1)
    .split(',')
    .map((field) => field.trim().replace(/\?$/, ''))
    .filter(Boolean)
    .sort();
};

/** The HTTP statuses a cell names: every three-digit number from 100 to 599 standing alone. */
export const statusesIn = (cell: string): string[] =>
  [...new Set([...cell.matchAll(/(?<![\w.,-])([1-5]\d\d)(?![\w.,]\d)/g)].map((m) => m[1] ?? ''))].sort();
