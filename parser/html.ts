import { HTMLElement as NhpElement, TextNode as NhpText } from 'node-html-parser';

/**
 * A lean document tree for the parser: the tree node-html-parser builds (same tokenizer pattern, same implicit
 * closing rules, same repair of unclosed tags, so the same parent/child structure; test/parser/html.test.ts
 * compares the two on every fixture page), without its per-node costs. node-html-parser gives every element a
 * DOMTokenList, a defineProperty'd range and two regex passes over its attributes, and that was most of the parse
 * time (docs/parser.md#how-it-reads-a-page). Here an element keeps its raw attribute string and parses it on first use,
 * and the tree is indexed by tag, id and class while it is built, so that selectors start from short candidate lists.
 * Entity decoding is node-html-parser's own (attribute mode for attributes, legacy mode for text) wherever a value
 * holds anything but the few common entities.
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

// node-html-parser's tokenizer pattern (v9), kept verbatim so that tags split exactly where they split there.
const kMarkupPattern =
  /<!--[\s\S]*?-->|<(\/?)([a-zA-Z][-.:0-9_a-zA-Z@\xB7\xC0-\xD6\xD8-\xF6\u00F8-\u03A1\u03A3-\u03D9\u03DB-\u03EF\u03F7-\u03FF\u0400-\u04FF\u0500-\u052F\u1D00-\u1D2B\u1D6B-\u1D77\u1D79-\u1D9A\u1E00-\u1E9B\u1F00-\u1F15\u1F18-\u1F1D\u1F20-\u1F45\u1F48-\u1F4D\u1F50-\u1F57\u1F59\u1F5B\u1F5D\u1F5F-\u1F7D\u1F80-\u1FB4\u1FB6-\u1FBC\u1FBE\u1FC2-\u1FC4\u1FC6-\u1FCC\u1FD0-\u1FD3\u1FD6-\u1FDB\u1FE0-\u1FEC\u1FF2-\u1FF4\u1FF6-\u1FFC\u2126\u212A-\u212B\u2132\u214E\u2160-\u2188\u2C60-\u2C7F\uA722-\uA787\uA78B-\uA78E\uA790-\uA7AD\uA7B0-\uA7B7\uA7F7-\uA7FF\uAB30-\uAB5A\uAB5C-\uAB5F\uAB64-\uAB65\uFB00-\uFB06\uFB13-\uFB17\uFF21-\uFF3A\uFF41-\uFF5A\x37F-\u1FFF\u200C-\u200D\u203F-\u2040\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD]*)((?:\s+[^>]*?(?:(?:'[^']*')|(?:"[^"]*"))?)*)\s*(\/?)>/gu;
/** One tokenizer match: a comment, or a start/end tag with the pattern's four groups. */
interface Markup {
  start: number;
  end: number;
  comment: boolean;
  leadingSlash: string;
  tagName: string;
  /** Length of the attribute text, which starts right after the tag name. */
  attributesLength: number;
  closingSlash: string;
}

const MARKUP: Markup = {
  start: 0,
  end: 0,
  comment: false,
  leadingSlash: '',
  tagName: '',
  attributesLength: 0,
  closingSlash: '',
};

/** ASCII characters allowed in a tag name after its first letter (`[-.:0-9_a-zA-Z@]`). */
const NAME_CHAR = new Uint8Array(128);
for (const c of '-.:0123456789_@abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ') NAME_CHAR[c.charCodeAt(0)] = 1;

const isLetter = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/**
 * The next match of kMarkupPattern at or after `from`, found by a character scan that follows the pattern's own
 * order of preference (a quoted value first, then another attribute, then the end of the tag), so that it stops
 * where the pattern stops. Anything the scan does not settle on that path (a non-ASCII tag name, an unclosed quote,
 * a quote followed by something other than space, `/>` or `>`) is handed to the pattern itself.
 */
const nextMarkup = (data: string, from: number, m: Markup): boolean => {
  const n = data.length;
  // Tags usually follow each other directly ("</div></div>"): look at the next character before searching.
  for (let p = data.charCodeAt(from) === 60 ? from : data.indexOf('<', from); p >= 0; p = data.indexOf('<', p + 1)) {
    const c1 = data.charCodeAt(p + 1);
    if (c1 === 33) {
      if (!data.startsWith('<!--', p)) continue;
      const close = data.indexOf('-->', p + 4);
      if (close < 0) continue;
      m.start = p;
      m.end = close + 3;
      m.comment = true;
      m.leadingSlash = '';
      m.tagName = '';
      m.attributesLength = 0;
      m.closingSlash = '';
      return true;
    }
    let q = p + 1;
    if (c1 === 47) q++;
    if (!isLetter(data.charCodeAt(q))) continue;
    let r = q + 1;
    let c = data.charCodeAt(r);
    // Tag names of up to 7 characters are looked up by a number made of their codes, so that "div" is one string.
    let code = data.charCodeAt(q);
    while (c < 128 && NAME_CHAR[c] === 1) {
      code = code * 128 + c;
      c = data.charCodeAt(++r);
    }
    if (c >= 128 && r < n) return viaPattern(data, p, m);
    let end = -1;
    let closingSlash = '';
    let attrsEnd = r;
    if (c === 62) end = r + 1;
    else if (c === 47) {
      if (data.charCodeAt(r + 1) !== 62) continue;
      closingSlash = '/';
      end = r + 2;
    } else if (c === 32 || (c >= 9 && c <= 13)) {
      let i = r + 1;
      while (i < n) {
        const ch = data.charCodeAt(i);
        if (ch === 62) {
          if (data.charCodeAt(i - 1) === 47) {
            closingSlash = '/';
            attrsEnd = i - 1;
          } else attrsEnd = i;
          end = i + 1;
          break;
        }
        if (ch === 34 || ch === 39) {
          const close = data.indexOf(ch === 34 ? '"' : "'", i + 1);
          if (close < 0) return viaPattern(data, p, m);
          const after = data.charCodeAt(close + 1);
          if (
            !(after === 32 || (after >= 9 && after <= 13) || after === 62) &&
            !(after === 47 && data.charCodeAt(close + 2) === 62)
          )
            return viaPattern(data, p, m);
          i = close + 1;
          continue;
        }
        i++;
      }
      if (end < 0) return viaPattern(data, p, m);
    } else if (r >= n) {
      continue;
    } else {
      // Unicode spaces and anything else after a tag name: let the pattern decide.
      if (c > 127) return viaPattern(data, p, m);
      continue;
    }
    m.start = p;
    m.end = end;
    m.comment = false;
    m.leadingSlash = c1 === 47 ? '/' : '';
    m.tagName = r - q <= 7 ? internName(code, data, q, r) : data.slice(q, r);
    m.attributesLength = attrsEnd - r;
    m.closingSlash = closingSlash;
    return true;
  }
  return false;
};

const NAMES = new Map<number, string>();

const internName = (code: number, data: string, q: number, r: number): string => {
  let name = NAMES.get(code);
  if (name === undefined) {
    name = data.slice(q, r);
    if (NAMES.size < 4096) NAMES.set(code, name);
  }
  return name;
};

/** What the builder needs to know about a tag name as written, worked out once per distinct name. */
interface TagInfo {
  lower: string;
  isVoid: boolean;
  blockText: boolean;
  /** A raw-text body that the tree leaves out. */
  skipBody: boolean;
  /** Small number naming the entry, for per-document arrays; -1 once the table is full. */
  index: number;
}

const TAG_INFO = new Map<string, TagInfo>();

const tagInfo = (tag: string): TagInfo => {
  let info = TAG_INFO.get(tag);
  if (info === undefined) {
    const lower = lowerName(tag);
    const full = TAG_INFO.size >= 4096;
    info = {
      lower,
      isVoid: VOID.has(tag),
      blockText: BLOCK_TEXT.has(lower),
      skipBody: SKIPPED_BODIES.has(tag),
      index: full ? -1 : TAG_INFO.size,
    };
    if (!full) TAG_INFO.set(tag, info);
  }
  return info;
};

/** Lower-case forms of tag names, computed once per distinct name. */
const LOWER = new Map<string, string>();

const lowerName = (tag: string): string => {
  let lower = LOWER.get(tag);
  if (lower === undefined) {
    lower = tag.toLowerCase();
    if (LOWER.size < 4096) LOWER.set(tag, lower);
  }
  return lower;
};

const viaPattern = (data: string, from: number, m: Markup): boolean => {
  kMarkupPattern.lastIndex = from;
  const match = kMarkupPattern.exec(data);
  if (!match) return false;
  m.end = kMarkupPattern.lastIndex;
  m.start = m.end - match[0].length;
  m.comment = match[0].startsWith('<!--');
  m.leadingSlash = match[1] ?? '';
  m.tagName = match[2] ?? '';
  m.attributesLength = match[3]?.length ?? 0;
  m.closingSlash = match[4] ?? '';
  return true;
};

const kUnquotedAttributeValueAtEnd = /(?:^|\s)[^\s"'<>=/]+\s*=\s*[^\s"'<>`]+$/;

const VOID = new Set(
  [
    'area',
    'base',
    'br',
    'col',
    'embed',
    'hr',
    'img',
    'input',
    'link',
    'meta',
    'param',
    'source',
    'track',
    'wbr',
  ].flatMap((t) => [t, t.toUpperCase()]),
);

/** node-html-parser's tables list each tag in lower and in upper case, never mixed. */
const table = (src: Record<string, string[]>): Map<string, Set<string>> => {
  const m = new Map<string, Set<string>>();
  for (const [k, vs] of Object.entries(src)) {
    const set = new Set(vs.flatMap((v) => [v, v.toUpperCase()]));
    m.set(k, set);
    m.set(k.toUpperCase(), set);
  }
  return m;
};
const CELLS = ['td', 'th', 'tr', 'tbody', 'tfoot'];
const CLOSED_BY_OPENING = table({
  li: ['li'],
  p: ['p', 'div'],
  b: ['div'],
  td: CELLS,
  th: CELLS,
  tr: ['tr', 'tbody', 'tfoot'],
  thead: ['tbody', 'tfoot'],
  tbody: ['tbody', 'tfoot'],
  h1: ['h1'],
  h2: ['h2'],
  h3: ['h3'],
  h4: ['h4'],
  h5: ['h5'],
  h6: ['h6'],
  dt: ['dt', 'dd'],
  dd: ['dt', 'dd'],
});
const TABLE_PARTS = ['tr', 'table', 'thead', 'tbody', 'tfoot'];
const CLOSED_BY_CLOSING = table({
  li: ['ul', 'ol'],
  a: ['div'],
  b: ['div'],
  i: ['div'],
  p: ['div'],
  td: TABLE_PARTS,
  th: TABLE_PARTS,
  tr: ['table', 'thead', 'tbody', 'tfoot'],
  tbody: ['table'],
  tfoot: ['table'],
  dt: ['dl', 'body', 'html'],
  dd: ['dl', 'body', 'html'],
});
const P_NOT_CLOSED_BY = new Set(['a', 'audio', 'del', 'ins', 'map', 'noscript', 'video']);
/** Elements whose content is kept as raw text (what the parser asked node-html-parser for). */
const BLOCK_TEXT = new Set(['noscript', 'pre', 'textarea']);

const NO_ATTRIBUTES: Map<string, string | null> = new Map();
const NO_CLASSES: readonly string[] = [];
const NO_LISTS: readonly HTMLElement[][] = [];

/** `[_a-zA-Z()[\]#@$.?:]` and `[a-zA-Z0-9-._:()[\]#]`: where an attribute name may start, and what may follow. */
const NAME_START = new Uint8Array(128);
const NAME_REST = new Uint8Array(128);
for (const c of '_()[]#@$.?:abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ') NAME_START[c.charCodeAt(0)] = 1;
for (const c of '-._:()[]#0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ')
  NAME_REST[c.charCodeAt(0)] = 1;

/**
 * Attributes as node-html-parser's `rawAttributes` reads them with
 * `/([_a-zA-Z()[\]#@$.?:][a-zA-Z0-9-._:()[\]#]*)(?:\s*=\s*('[^']*'|"[^"]*"|\S+))?/g` (first occurrence of a
 * name wins unless it had no value), by a character scan instead of the regex.
 */
const parseAttributes = (a: string): Map<string, string | null> => {
  if (!a) return NO_ATTRIBUTES;
  const attrs = new Map<string, string | null>();
  const n = a.length;
  let i = 0;
  while (i < n) {
    const c = a.charCodeAt(i);
    if (c >= 128 || NAME_START[c] !== 1) {
      i++;
      continue;
    }
    let j = i + 1;
    for (let d = a.charCodeAt(j); d < 128 && NAME_REST[d] === 1; d = a.charCodeAt(++j));
    const key = a.slice(i, j);
    i = j;
    let val: string | null = null;
    let k = j;
    while (k < n && isSpace(a.charCodeAt(k))) k++;
    if (a.charCodeAt(k) === 61) {
      k++;
      while (k < n && isSpace(a.charCodeAt(k))) k++;
      if (k < n) {
        const q = a.charCodeAt(k);
        let end = -1;
        if (q === 39 || q === 34) {
          const close = a.indexOf(q === 39 ? "'" : '"', k + 1);
          if (close >= 0) end = close + 1;
        }
        if (end < 0) {
          end = k;
          while (end < n && !isSpace(a.charCodeAt(end))) end++;
        }
        const v = a.slice(k, end);
        val = v && (v[0] === "'" || v[0] === '"') ? v.slice(1, v.length - 1) : v || null;
        i = end;
      }
    }
    if (key === '__proto__') continue;
    attrs.set(key, attrs.get(key) || val);
  }
  return attrs;
};

const isSpace = (c: number): boolean =>
  c === 32 ||
  (c >= 9 && c <= 13) ||
  (c > 127 &&
    (c === 0xa0 ||
      c === 0x1680 ||
      (c >= 0x2000 && c <= 0x200a) ||
      c === 0x2028 ||
      c === 0x2029 ||
      c === 0x202f ||
      c === 0x205f ||
      c === 0x3000 ||
      c === 0xfeff));

/**
 * The last search for `=` in a text: where it began and what it found (-1: none after it). The search for a tag's
 * attributes runs past the tag to the next `=` in the page; tags come in page order, so the next tag's search
 * usually ends at the same `=` and takes it from here. Without this a page of tags with no `=` between them (none
 * of Google's, but any page a proxy answers with) rescanned the rest of the page per tag: 125,000 such tags took 2 s.
 */
const EQUALS = { text: '', from: 0, at: -1 };
const nextEquals = (text: string, from: number): number => {
  if (EQUALS.text === text && EQUALS.from <= from && (EQUALS.at < 0 || from <= EQUALS.at)) return EQUALS.at;
  const at = text.indexOf('=', from);
  EQUALS.text = text;
  EQUALS.from = from;
  EQUALS.at = at;
  return at;
};

/** Out-parameters of keyAttributes (no object per element). */
const KEY = { id: '', cls: '' };

/**
 * `id` and `class` exactly as node-html-parser's tokenizer reads them with
 * `/(?:^|\s)(id|class)\s*=\s*('[^']*'|"[^"]*"|\S+)/gi` (anywhere in the attribute text, last one wins), by a
 * character scan instead of a regex. Reads the attribute text `a.slice(base, n)` where it lies (usually inside the
 * parsed page itself, so that no copy of it is scanned).
 */
const keyAttributes = (a: string, base: number, n: number): void => {
  let id = '';
  let cls = '';
  // Every match has an "=" right after the name (spaces allowed); `from` is where the regex would resume.
  let from = base;
  for (let eq = nextEquals(a, base); eq >= 0 && eq < n; eq = nextEquals(a, eq + 1)) {
    let k = eq - 1;
    while (k >= base && isSpace(a.charCodeAt(k))) k--;
    let nameStart = -1;
    let isId = false;
    if (k >= base + 1 && (a.charCodeAt(k) | 32) === 100 && (a.charCodeAt(k - 1) | 32) === 105) {
      nameStart = k - 1;
      isId = true;
    } else if (
      k >= base + 4 &&
      (a.charCodeAt(k) | 32) === 115 &&
      (a.charCodeAt(k - 1) | 32) === 115 &&
      (a.charCodeAt(k - 2) | 32) === 97 &&
      (a.charCodeAt(k - 3) | 32) === 108 &&
      (a.charCodeAt(k - 4) | 32) === 99
    ) {
      nameStart = k - 4;
    }
    if (nameStart < 0) continue;
    // `(?:^|\s)`: the string's start (only before any match), or a space at or after where the regex resumes.
    if (nameStart === base ? from !== base : nameStart - 1 < from || !isSpace(a.charCodeAt(nameStart - 1))) continue;
    let j = eq + 1;
    while (j < n && isSpace(a.charCodeAt(j))) j++;
    if (j >= n) continue;
    const q = a.charCodeAt(j);
    let valueEnd = -1;
    if (q === 39 || q === 34) {
      const close = a.indexOf(q === 39 ? "'" : '"', j + 1);
      if (close >= 0 && close < n) valueEnd = close + 1;
    }
    if (valueEnd < 0) {
      valueEnd = j;
      while (valueEnd < n && !isSpace(a.charCodeAt(valueEnd))) valueEnd++;
    }
    const c0 = a.charCodeAt(j);
    const val = c0 === 39 || c0 === 34 ? a.slice(j + 1, valueEnd - 1) : a.slice(j, valueEnd);
    if (isId) id = val;
    else cls = val;
    from = valueEnd;
    eq = valueEnd - 1;
  }
  KEY.id = id;
  KEY.cls = cls;
};

/** `class` split as node-html-parser splits it (`/\s+/`); plain ASCII class lists take the quick path. */
const splitClasses = (cls: string): string[] => {
  for (let i = 0; i < cls.length; i++) {
    const c = cls.charCodeAt(i);
    if (c < 32 || c > 126) return cls.split(/\s+/);
  }
  return cls.split(' ');
};

const push = <T>(m: Map<string, T[]>, k: string, el: T): void => {
  const l = m.get(k);
  if (l) l.push(el);
  else m.set(k, [el]);
};

const append = (parent: HTMLElement, child: HTMLNode): void => {
  child.parentNode = parent;
  if (parent.childNodes === NO_CHILDREN) parent.childNodes = [child];
  else parent.childNodes.push(child);
};

/**
 * The tree node-html-parser's `parse` builds with the options the parser used (comments dropped; noscript, pre and
 * textarea kept as text), less the bodies of `<script>`, `<style>` and `<svg>`. Google pages are mostly inline
 * scripts, styles and SVG icons; the tokenizer jumps from such an opening tag to its closing tag in the page as it
 * is (no copy of the page is made), and the elements themselves stay, so nesting is unchanged.
 * test/parser/html.test.ts compares the two trees node by node on every fixture page.
 */
export const parseDocument = (html: string): HTMLDocument => build(html);

/** Raw-text bodies the tree leaves out. Google writes these tags in lower case; `<SCRIPT>` is tokenized. */
const SKIPPED_BODIES = new Set(['script', 'style', 'svg']);

const build = (data: string): HTMLDocument => {
  const root = new HTMLElement(null as unknown as string, '', '', NO_CLASSES);
  const doc = new HTMLDocument(root);
  root.doc = doc;
  const stack: HTMLElement[] = [root];
  let current = root;
  doc.source = data;
  doc.inSourceOrder = doc.all;
  // node-html-parser reads the page inside a frame element: text before the first tag and after the last one
  // belongs to the root.
  let lastTextPos = 0;
  const m = MARKUP;
  // The same class lists recur hundreds of times on a page: one array (and one set of token strings) each, and
  // the byClass lists its elements go into.
  const classLists = new Map<string, { classes: readonly string[]; lists: HTMLElement[][] }>();
  // This document's byTag list for each tag name seen, by the name's TagInfo index.
  const tagLists: Array<HTMLElement[] | undefined> = [];
  for (let pos = 0; nextMarkup(data, pos, m); pos = m.end) {
    let leadingSlash = m.leadingSlash;
    const tagName = m.tagName;
    let closingSlash = m.closingSlash;
    const tagEndPos = m.end;
    const tagStartPos = m.start;
    // The attribute text lies in the page right after the tag name; it is only copied out where a slash moves in.
    const attrsFrom = tagStartPos + 1 + leadingSlash.length + tagName.length;
    const attrsLength = m.attributesLength;
    let movedSlash: string | undefined;
    if (closingSlash && !leadingSlash && !VOID.has(tagName)) {
      const written = data.slice(attrsFrom, attrsFrom + attrsLength);
      if (kUnquotedAttributeValueAtEnd.test(written)) {
        movedSlash = written + closingSlash;
        closingSlash = '';
      }
    }
    if (lastTextPos < tagStartPos) {
      append(current, new HTMLText(data.substring(lastTextPos, tagStartPos), null));
    }
    lastTextPos = tagEndPos;
    if (m.comment) {
      doc.skipped.push(tagStartPos, tagEndPos);
      continue;
    }
    // node-html-parser's frame element: ignored when a page writes it too, as there.
    if (tagName === 'documentfragmentcontainer') continue;
    let isVoid = false;
    if (!leadingSlash) {
      if (movedSlash === undefined) keyAttributes(data, attrsFrom, attrsFrom + attrsLength);
      else keyAttributes(movedSlash, 0, movedSlash.length);
      const id = KEY.id;
      const cls = KEY.cls;
      if (!closingSlash) {
        for (let closes = CLOSED_BY_OPENING.get(current.rawTagName); closes?.has(tagName); ) {
          stack.pop();
          current = stack[stack.length - 1] as HTMLElement;
          closes = CLOSED_BY_OPENING.get(current.rawTagName);
        }
      }
      let classes = NO_CLASSES;
      let lists = NO_LISTS;
      if (cls) {
        let known = classLists.get(cls);
        if (!known) {
          const split = splitClasses(cls);
          known = { classes: split, lists: doc.classLists(split) };
          classLists.set(cls, known);
        }
        classes = known.classes;
        lists = known.lists;
      }
      const info = tagInfo(tagName);
      const rawAttrs =
        movedSlash !== undefined
          ? movedSlash.slice(1)
          : attrsLength > 1
            ? data.slice(attrsFrom + 1, attrsFrom + attrsLength)
            : '';
      const el = new HTMLElement(tagName, rawAttrs, id, classes, info.lower);
      el.attrsStart = attrsFrom + 1;
      el.attrsEnd = attrsFrom + attrsLength;
      let tagList = info.index >= 0 ? tagLists[info.index] : undefined;
      if (!tagList && info.index >= 0) {
        tagList = doc.byTag.get(info.lower);
        if (!tagList) {
          tagList = [];
          doc.byTag.set(info.lower, tagList);
        }
        tagLists[info.index] = tagList;
      }
      doc.addWith(el, lists, tagList);
      append(current, el);
      current = el;
      stack.push(el);
      isVoid = info.isVoid;
      if (info.skipBody && !closingSlash) {
        // The body runs to the closing tag, or (never closed) to the end of the page.
        const close = data.indexOf(`</${tagName}`, tagEndPos);
        lastTextPos = m.end = close < 0 ? data.length : close;
        doc.skipped.push(tagEndPos, m.end);
      }
      if (info.blockText) {
        const closeMarkup = `</${tagName}>`;
        const closeIndex = data.indexOf(closeMarkup, tagEndPos);
        const textEndPos = closeIndex === -1 ? data.length : closeIndex;
        const text = data.substring(tagEndPos, textEndPos);
        if (text.length > 0 && /\S/.test(text)) append(current, new HTMLText(text, null));
        if (closeIndex === -1) {
          lastTextPos = m.end = data.length + 1;
        } else {
          lastTextPos = m.end = closeIndex + closeMarkup.length;
          leadingSlash = '/';
        }
      }
    }
    if (leadingSlash || closingSlash || isVoid) {
      while (true) {
        if (current.rawTagName === tagName) {
          stack.pop();
          current = stack[stack.length - 1] as HTMLElement;
          break;
        }
        if (CLOSED_BY_CLOSING.get(current.tagName)?.has(tagName)) {
          stack.pop();
          current = stack[stack.length - 1] as HTMLElement;
          continue;
        }
        const openTag = current.rawTagName ? current.rawTagName.toLowerCase() : '';
        if (openTag === 'p' && stack.length > 1) {
          const closingTag = tagName.toLowerCase();
          const container = stack[stack.length - 2];
          if (
            container?.rawTagName &&
            container.rawTagName.toLowerCase() === closingTag &&
            !P_NOT_CLOSED_BY.has(closingTag)
          ) {
            stack.pop();
            current = stack[stack.length - 1] as HTMLElement;
            continue;
          }
        }
        break;
      }
    }
  }
  // Where the frame would close: trailing text belongs to whatever is still open.
  if (lastTextPos < data.length) append(current, new HTMLText(data.substring(lastTextPos), null));
  // Unclosed elements, repaired as node-html-parser repairs them: children move up to the enclosing element.
  const unclosed = stack.length > 1;
  // node-html-parser moves an unclosed element's children up one level per enclosing unclosed element, so the
  // children of the innermost move once per level: n nested unclosed tags cost ~n²/2 moves (249,000 of them, under
  // MAX_PAGE_TAGS, held a parse thread for minutes). The same moves are made here once: what would have been appended
  // to the element now on top of the stack waits in `carried` (one list per element it came from, innermost last)
  // until an element keeps it, and is appended there in the order node-html-parser leaves it.
  const carried: HTMLNode[][] = [];
  const settle = (keeper: HTMLElement) => {
    for (let i = carried.length - 1; i >= 0; i--) for (const child of carried[i] as HTMLNode[]) append(keeper, child);
    carried.length = 0;
  };
  while (stack.length > 1) {
    const last = stack.pop() as HTMLElement;
    const oneBefore = stack[stack.length - 1] as HTMLElement;
    if (!last.parentNode?.parentNode) {
      settle(last);
      continue;
    }
    removeChild(oneBefore, last);
    carried.push(last.childNodes);
    last.childNodes = NO_CHILDREN;
    if (last.parentNode === oneBefore && last.tagName === oneBefore.tagName) {
      // a same-tag pair: the children go to the pair's parent, and the outer one is closed where it stands
      stack.pop();
      const keeper = oneBefore.parentNode as HTMLElement;
      if (keeper !== stack[stack.length - 1]) settle(keeper);
    }
  }
  settle(stack[0] as HTMLElement);
  // Moving children can change document order, so the index is rebuilt from the repaired tree.
  if (unclosed) reindex(doc);
  doc.closeRanges();
  // the page's text is the document's to keep, not the tokenizer's
  EQUALS.text = '';
  return doc;
};

/** document order, walked with a stack of its own: a page can nest deeper than the call stack goes */
const reindex = (doc: HTMLDocument): void => {
  doc.inSourceOrder = [...doc.all];
  doc.clear();
  const pending: HTMLNode[] = [...doc.root.childNodes].reverse();
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (node.nodeType !== 1) continue;
    const el = node as HTMLElement;
    doc.add(el);
    for (let i = el.childNodes.length - 1; i >= 0; i--) pending.push(el.childNodes[i] as HTMLNode);
  }
};

/** an open element is its parent's last child when the page ends: taken off the end, without a scan */
const removeChild = (parent: HTMLElement, child: HTMLElement): void => {
  const children = parent.childNodes;
  if (children[children.length - 1] === child) children.pop();
  else parent.childNodes = children.filter((c) => c !== child);
};

/** The common entities decoded directly; anything else (or any doubt) goes to node-html-parser's decoder. */
const SIMPLE: Record<string, string> = { amp: '&', quot: '"', lt: '<', gt: '>', apos: "'", nbsp: '\u00a0' };
const ENTITY = /&(?:(amp|quot|lt|gt|apos|nbsp)|#(\d{1,5})|#[xX]([0-9a-fA-F]{1,4}));/g;
const ONLY_SIMPLE = /&(?!(?:amp|quot|lt|gt|apos|nbsp|#\d{1,5}|#[xX][0-9a-fA-F]{1,4});)/;

/** Code points that decode to themselves in both modes (no C0/C1 remapping, no surrogates, no zero). */
const plainCodePoint = (n: number): boolean =>
  (n >= 0x20 && n < 0x7f) || n === 0x09 || n === 0x0a || (n >= 0xa0 && n < 0xd800) || (n >= 0xe000 && n <= 0xfffd);

const AMP = /&amp;/g;

const fastDecode = (s: string): string | undefined => {
  // Most values are URLs whose only entity is `&amp;`.
  let amps = 0;
  for (let i = s.indexOf('&'); i >= 0; i = s.indexOf('&', i + 1)) {
    if (!s.startsWith('amp;', i + 1)) {
      amps = -1;
      break;
    }
    amps++;
  }
  if (amps > 0) return s.replace(AMP, '&');
  if (ONLY_SIMPLE.test(s)) return undefined;
  let ok = true;
  const out = s.replace(ENTITY, (m, name: string | undefined, dec: string | undefined, hex: string | undefined) => {
    if (name) return SIMPLE[name] as string;
    const n = dec ? Number.parseInt(dec, 10) : Number.parseInt(hex as string, 16);
    if (!plainCodePoint(n)) {
      ok = false;
      return m;
    }
    return String.fromCharCode(n);
  });
  return ok ? out : undefined;
};

let scratch: NhpElement | undefined;

/** Attribute-mode decoding (`&copy=` inside a URL stays as written), identical to node-html-parser's getAttribute. */
export const decodeAttribute = (raw: string): string => {
  if (!raw.includes('&')) return raw;
  const fast = fastDecode(raw);
  if (fast !== undefined) return fast;
  scratch ??= new NhpElement('x', {}, '');
  void scratch.attrs;
  scratch.setAttribute('v', raw);
  return scratch.getAttribute('v') ?? raw;
};

/** Legacy-mode (text) decoding, identical to node-html-parser's `textContent`. */
export const decodeText = (raw: string): string => {
  if (!raw.includes('&')) return raw;
  return fastDecode(raw) ?? new NhpText(raw).text;
};
