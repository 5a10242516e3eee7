import { parseAttributes } from './attributes.js';
import { decodeAttribute, decodeText } from './entities.js';

/**
 * The nodes of the parser's document tree: node-html-parser's node shapes (the parser was written against them),
 * without their per-node costs. node-html-parser gives every element a DOMTokenList, a defineProperty'd range and
 * two regex passes over its attributes, and that was most of the parse time. Here an element keeps its raw attribute
 * string and parses it on first use.
 */

export class HTMLText {
  readonly nodeType = 3;
  parentNode: HTMLElement | null;
  readonly rawText: string;
  constructor(rawText: string, parentNode: HTMLElement | null) {
    this.rawText = rawText;
    this.parentNode = parentNode;
  }
  get text(): string {
    return decodeText(this.rawText);
  }
  get textContent(): string {
    return decodeText(this.rawText);
  }
}

export type HTMLNode = HTMLElement | HTMLText;

const NO_CHILDREN: HTMLNode[] = [];

export class HTMLElement {
  readonly nodeType = 1;
  /** The tag name as written; null for the document root. */
  readonly rawTagName: string;
  parentNode: HTMLElement | null = null;
  /** Shared and empty until the first child arrives (most elements are leaves); never mutate it from outside. */
  childNodes: HTMLNode[] = NO_CHILDREN;
  /** The attribute text after the tag name, as written. */
  readonly rawAttrs: string;
  /** `id` and `class` as node-html-parser reads them while tokenizing (last one wins, not decoded). */
  readonly id: string;
  readonly classes: readonly string[];
  /** The tag name in lower case ('' for the root). */
  readonly localName: string;
  /** Document order, for sorting query results; the root is -1. */
  order = -1;
  /** Document order of the last descendant (the element's own when it has none): its subtree is (order, end]. */
  end = -1;
  /** Where the start tag's attribute text lies in the parsed source. */
  attrsStart = 0;
  attrsEnd = 0;
  /** The document this element belongs to (its index). */
  doc: HTMLDocument | null = null;
  private raw: Map<string, string | null> | undefined = undefined;
  /** Set when two attribute names differ only in case: lookups then go through the decoded map below. */
  private decoded: Map<string, string> | undefined = undefined;
  private lowerAttrs: string | undefined = undefined;

  constructor(
    rawTagName: string,
    rawAttrs: string,
    id: string,
    classes: readonly string[],
    localName = rawTagName ? rawTagName.toLowerCase() : '',
  ) {
    this.rawTagName = rawTagName;
    this.localName = localName;
    this.rawAttrs = rawAttrs;
    this.id = id;
    this.classes = classes;
  }

  get tagName(): string {
    return this.rawTagName ? this.rawTagName.toUpperCase() : this.rawTagName;
  }

  get firstChild(): HTMLNode | undefined {
    return this.childNodes[0];
  }

  /** Attributes as written (first occurrence wins, values not decoded), parsed on first use. */
  get rawAttributes(): Record<string, string | null> {
    return Object.fromEntries(this.attributeMap());
  }

  private attributeMap(): Map<string, string | null> {
    if (this.raw) return this.raw;
    const raw = parseAttributes(this.rawAttrs);
    this.raw = raw;
    for (const key of raw.keys()) {
      if (key !== key.toLowerCase()) {
        // node-html-parser lower-cases names after reading them; a later name wins over an earlier one.
        const d = new Map<string, string>();
        for (const [k, v] of raw) d.set(k.toLowerCase(), decodeAttribute(v || ''));
        this.decoded = d;
        break;
      }
    }
    return raw;
  }

  /**
   * True when the attribute text cannot hold `lower` as a name, whatever its case: most lookups (an ancestor walk
   * asking every element for `data-text-ad` or `role`) end here without reading the attributes.
   */
  private certainlyLacks(lower: string): boolean {
    if (this.raw) return false;
    const text = this.rawAttrs;
    if (text.includes(lower)) return false;
    this.lowerAttrs ??= text.toLowerCase();
    return !this.lowerAttrs.includes(lower);
  }

  /** Decoded attribute value, names case-insensitive; undefined when absent. */
  getAttribute(name: string): string | undefined {
    if (this.certainlyLacks(name.toLowerCase())) return undefined;
    const raw = this.attributeMap();
    if (this.decoded) return this.decoded.get(name.toLowerCase());
    const v = raw.get(name);
    if (v === undefined) {
      const lower = name.toLowerCase();
      if (lower === name) return undefined;
      const w = raw.get(lower);
      return w === undefined ? undefined : decodeAttribute(w || '');
    }
    return decodeAttribute(v || '');
  }

  hasAttribute(name: string): boolean {
    if (this.certainlyLacks(name.toLowerCase())) return false;
    const raw = this.attributeMap();
    if (this.decoded) return this.decoded.has(name.toLowerCase());
    return raw.has(name) || raw.has(name.toLowerCase());
  }

  hasClass(cls: string): boolean {
    return this.classes.includes(cls);
  }

  get rawText(): string {
    if (this.rawTagName === 'br' || this.rawTagName === 'BR' || /^br$/i.test(this.rawTagName ?? '')) return '\n';
    const parts: string[] = [];
    collectRawText(this, parts);
    return parts.join('');
  }

  get textContent(): string {
    return decodeText(this.rawText);
  }

  get text(): string {
    return decodeText(this.rawText);
  }
}

const collectRawText = (el: HTMLElement, out: string[]): void => {
  for (const c of el.childNodes) {
    if (c.nodeType === 3) out.push(c.rawText);
    else if (/^br$/i.test(c.rawTagName)) out.push('\n');
    else collectRawText(c, out);
  }
};

/** Appends `child` to `parent` (the tree is built by appending only). */
export const append = (parent: HTMLElement, child: HTMLNode): void => {
  child.parentNode = parent;
  if (parent.childNodes === NO_CHILDREN) parent.childNodes = [child];
  else parent.childNodes.push(child);
};

/** Leaves `el` without children, sharing the one empty list. */
export const dropChildren = (el: HTMLElement): void => {
  el.childNodes = NO_CHILDREN;
};

/**
 * A parsed page: its root, and the indexes selectors start from (elements by tag, id, class, and on request by
 * attribute name), built while the tree is built so that a query starts from a short candidate list. (Here beside
 * the nodes, which point back at their document: one module, no import cycle.)
 */
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
