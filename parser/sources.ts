import type { HTMLDocument, HTMLElement } from './dom/index.js';

/**
 * Where in the page each part of the parser's output was read from: the element a result, an ad, a question or a
 * place was built from, and the block a SERP feature's items sit in. The renderer marks those elements in the page it
 * lays out and measures them (docs/screenshots.md#pixel-positions): the match is by the element's place in the page,
 * never by searching for its text. Kept beside the output, not in it, so the result a user sees is unchanged.
 */
const items = new WeakMap<object, HTMLElement>();
const blocks = new WeakMap<HTMLDocument, Array<{ name: string; el: HTMLElement }>>();

/** records that `value` was read from `el` (no-op without an element); returns `value` */
export const recordSource = <T extends object>(value: T, el: HTMLElement | null | undefined): T => {
  if (el) items.set(value, el);
  return value;
};

/** records that the feature `name` (its SerpApi name) is the block `el` */
export const recordBlock = (name: string, el: HTMLElement | null | undefined): void => {
  const doc = el?.doc;
  if (!el || !doc) return;
  const list = blocks.get(doc) ?? [];
  if (!list.some((b) => b.el === el && b.name === name)) list.push({ name, el });
  blocks.set(doc, list);
};

/**
 * Where `el`'s start tag can take an attribute in `source` (right after its tag name), or undefined when the element
 * is not from `source` (a deferred fragment the parser read from a script is another document).
 */
const offsetIn = (el: HTMLElement, source: string): number | undefined =>
  el.doc?.source === source && el.attrsStart > 0 ? el.attrsStart - 1 : undefined;

/** the place in `source` `value` was read from, when it was recorded and is in `source` itself */
export const sourceOffset = (value: unknown, source: string): number | undefined => {
  const el = value && typeof value === 'object' ? items.get(value) : undefined;
  return el ? offsetIn(el, source) : undefined;
};

/** the feature blocks recorded while `source` was parsed, with their places in it */
export const blockOffsets = (root: HTMLElement, source: string): Array<{ name: string; offset: number }> =>
  (root.doc ? (blocks.get(root.doc) ?? []) : []).flatMap((b) => {
    const offset = offsetIn(b.el, source);
    return offset === undefined ? [] : [{ name: b.name, offset }];
  });

/**
 * `source` with an attribute added to the start tag at each offset: `data-serp-k<id>` (empty). Several marks may
 * share a tag; the page is otherwise as it was.
 */
export const markSource = (source: string, marks: ReadonlyArray<{ offset: number; attribute: string }>): string => {
  const sorted = [...marks].sort((a, b) => a.offset - b.offset);
  let out = '';
  let at = 0;
  for (const m of sorted) {
    out += `${source.slice(at, m.offset)} ${m.attribute}`;
    at = m.offset;
  }
  return out + source.slice(at);
};
