import type { HTMLElement } from './nodes.js';

/**
 * A parsed page: its root, and the indexes selectors start from (elements by tag, id, class, and on request by
 * attribute name), built while the tree is built so that a query starts from a short candidate list.
 */

/** The root and the per-document index built while parsing. */
export class HTMLDocument {
  readonly root: HTMLElement;
  /** Every element in document order. */
  readonly all: HTMLElement[] = [];
  /** Elements by lower-case tag name, id and class, each list in document order. */
  readonly byTag = new Map<string, HTMLElement[]>();
  readonly byId = new Map<string, HTMLElement[]>();
  readonly byClass = new Map<string, HTMLElement[]>();
  private readonly byAttribute = new Map<string, HTMLElement[]>();
  constructor(root: HTMLElement) {
    this.root = root;
  }

  add(el: HTMLElement): void {
    this.addWith(el, this.classLists(el.classes));
  }

  /** `add` with the element's byClass lists already looked up (`classLists`), as the builder caches them. */
  addWith(el: HTMLElement, classLists: readonly HTMLElement[][], tagList?: HTMLElement[]): void {
    el.order = this.all.length;
    el.end = el.order;
    el.doc = this;
    this.all.push(el);
    if (tagList) tagList.push(el);
    else push(this.byTag, el.localName, el);
    if (el.id) push(this.byId, el.id, el);
    for (let i = 0; i < classLists.length; i++) (classLists[i] as HTMLElement[]).push(el);
  }

  /** The byClass lists an element with these classes goes into, created when missing; once per distinct class. */
  classLists(classes: readonly string[]): HTMLElement[][] {
    const lists: HTMLElement[][] = [];
    for (let i = 0; i < classes.length; i++) {
      const c = classes[i] as string;
      // Once per element even when the class is written twice.
      if (!c || (i > 0 && classes.indexOf(c) !== i)) continue;
      let l = this.byClass.get(c);
      if (!l) {
        l = [];
        this.byClass.set(c, l);
      }
      lists.push(l);
    }
    return lists;
  }

  /** The parsed source and its elements in source order (which is document order unless unclosed tags moved). */
  source = '';
  inSourceOrder: HTMLElement[] = [];
  /**
   * Where the source holds no markup of the tree: skipped bodies and comments, as start/end pairs in source order.
   * Attribute lookups scan only between them (on a Google page that is about a third of the bytes).
   */
  readonly skipped: number[] = [];

  /**
   * Candidates for elements carrying attribute `name` (lower case, as Google writes names), built on first request:
   * every element whose attribute text holds the name. The name may also sit inside a value, so this is a superset;
   * the selector's own attribute test, run on the candidates inside the query's scope only, decides. The names the
   * parser's selectors ask for are all found in one regex pass over the page.
   */
  withAttribute(name: string): HTMLElement[] {
    let list = this.byAttribute.get(name);
    if (list) return list;
    list = [];
    let positions: number[];
    if (INDEXED_ATTRIBUTES.has(name)) {
      this.occurrences ??= findOccurrences(this.source, this.skipped);
      positions = this.occurrences.get(name) ?? [];
    } else {
      positions = [];
      forEachPart(this.source, this.skipped, (part, offset) => {
        for (let pos = part.indexOf(name); pos >= 0; pos = part.indexOf(name, pos + 1)) positions.push(offset + pos);
      });
    }
    const els = this.inSourceOrder;
    let last: HTMLElement | undefined;
    for (const pos of positions) {
      let lo = 0;
      let hi = els.length - 1;
      let found = -1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if ((els[mid] as HTMLElement).attrsStart <= pos) {
          found = mid;
          lo = mid + 1;
        } else hi = mid - 1;
      }
      const el = els[found];
      if (!el || el === last || pos + name.length > el.attrsEnd) continue;
      last = el;
      list.push(el);
    }
    if (els !== this.all) list.sort((a, b) => a.order - b.order);
    this.byAttribute.set(name, list);
    return list;
  }

  private occurrences: Map<string, number[]> | undefined = undefined;

  /** Sets each element's `end` once the tree is final: children come after their parent in `all`. */
  closeRanges(): void {
    const all = this.all;
    this.root.end = all.length - 1;
    for (let i = all.length - 1; i >= 0; i--) {
      const el = all[i] as HTMLElement;
      const p = el.parentNode;
      if (p && p.end < el.end) p.end = el.end;
    }
  }

  clear(): void {
    this.all.length = 0;
    this.byTag.clear();
    this.byId.clear();
    this.byClass.clear();
    this.byAttribute.clear();
  }
}

/**
 * Attribute names that selectors look elements up by (rather than by id, class or tag). None is a prefix of
 * another, and every start position is tried, so each occurrence of each name is found.
 */
const INDEXED_ATTRIBUTES = new Set([
  'role',
  'data-attrid',
  'data-sncf',
  'data-text-ad',
  'data-exchange-rate',
  'data-content-feature',
  'data-kgmid',
  'data-mid',
  'data-news-doc-id',
]);
/** The names as one pattern, the `data-` ones behind their shared prefix (a quarter faster than a flat alternation). */
const INDEXED_PATTERN = new RegExp(
  [
    ...[...INDEXED_ATTRIBUTES].filter((n) => !n.startsWith('data-')),
    `data-(?:${[...INDEXED_ATTRIBUTES].flatMap((n) => (n.startsWith('data-') ? [n.slice(5)] : [])).join('|')})`,
  ].join('|'),
  'g',
);

const findOccurrences = (source: string, skipped: readonly number[]): Map<string, number[]> => {
  const found = new Map<string, number[]>();
  forEachPart(source, skipped, (part, offset) => {
    INDEXED_PATTERN.lastIndex = 0;
    for (let m = INDEXED_PATTERN.exec(part); m; m = INDEXED_PATTERN.exec(part)) {
      push(found, m[0], offset + m.index);
      INDEXED_PATTERN.lastIndex = m.index + 1;
    }
  });
  return found;
};

/** Calls `fn` with each stretch of `source` between the skipped ranges, and where it starts. */
const forEachPart = (source: string, skipped: readonly number[], fn: (part: string, offset: number) => void): void => {
  let from = 0;
  for (let i = 0; i < skipped.length; i += 2) {
    const start = skipped[i] as number;
    if (start > from) fn(source.slice(from, start), from);
    from = Math.max(from, skipped[i + 1] as number);
  }
  if (from < source.length) fn(from === 0 ? source : source.slice(from), from);
};

export const push = <T>(m: Map<string, T[]>, k: string, el: T): void => {
  const l = m.get(k);
  if (l) l.push(el);
  else m.set(k, [el]);
};
