import { parseAttributes } from './attributes.js';
import type { HTMLDocument } from './document.js';
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
