import type { HTMLDocument, HTMLElement } from './nodes.js';

/**
 * A small CSS selector matcher for the subset this parser uses (tag, #id, .class, [attr], [attr="v"], [attr^="v"],
 * [attr*="v"], descendant combinator, comma lists), with precompiled checks. A query starts from the document's
 * list for the subject's id, class, tag or attribute name (HTMLDocument, nodes.ts) and keeps the candidates inside
 * the scope's document-order range; only those are matched.
 */
type Check = (el: HTMLElement) => boolean;
type Compound = Check[];
/** One complex selector: compounds from the outermost ancestor to the subject. */
type Complex = Compound[];

const cache = new Map<string, Complex[]>();

/**
 * Values are slices of the attribute text, and decoding changes nothing in a text without `&` (and only turns
 * `&amp;` into `&` in one whose every `&` starts `&amp;`): there, a value that equals, starts with or holds `v`
 * means the text holds `v` (when `v` has no `&`), and an element whose text does not is settled without reading
 * its attributes.
 */
const cannotHold = (el: HTMLElement, v: string, vHasAmp: boolean): boolean => {
  const a = el.rawAttrs;
  if (a.includes(v)) return false;
  const amp = a.indexOf('&');
  if (amp < 0) return true;
  if (vHasAmp) return false;
  for (let i = amp; i >= 0; i = a.indexOf('&', i + 1)) if (!a.startsWith('amp;', i + 1)) return false;
  return true;
};

const attrCheck = (name: string, op: string | undefined, value: string | undefined): Check => {
  if (!op) return (el) => el.getAttribute(name) !== undefined;
  const v = value ?? '';
  const amp = v.includes('&');
  if (op === '=') return (el) => !cannotHold(el, v, amp) && el.getAttribute(name) === v;
  if (op === '^=') return (el) => !cannotHold(el, v, amp) && (el.getAttribute(name)?.startsWith(v) ?? false);
  return (el) => !cannotHold(el, v, amp) && (el.getAttribute(name)?.includes(v) ?? false);
};

const classCheck =
  (cls: string): Check =>
  (el) =>
    el.classes.includes(cls);

const TOKEN = /([a-zA-Z][\w-]*)|#([\w-]+)|\.([\w-]+)|\[([\w-]+)(?:(\^=|\*=|=)"([^"]*)")?\]/y;

const compileCompound = (src: string): Compound => {
  const checks: Compound = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < src.length) {
    const m = TOKEN.exec(src);
    if (!m) throw new Error(`unsupported selector: ${src}`);
    if (m[1]) {
      const tag = m[1].toLowerCase();
      checks.push((el) => el.localName === tag);
    } else if (m[2]) {
      const id = m[2];
      checks.push((el) => el.id === id);
    } else if (m[3]) checks.push(classCheck(m[3]));
    else if (m[4]) checks.push(attrCheck(m[4], m[5], m[6]));
  }
  return checks;
};

/**
 * A selector list as its complex selectors, each as its compounds: commas and spaces split only outside `[…]`, so
 * an attribute value may hold either (`[data-attrid="images universal"]`).
 */
const partsOf = (selector: string): string[][] => {
  const list: string[][] = [];
  let compounds: string[] = [];
  let current = '';
  let depth = 0;
  const endCompound = () => {
    if (current) compounds.push(current);
    current = '';
  };
  for (const ch of selector) {
    if (ch === '[') depth++;
    else if (ch === ']') depth--;
    if (depth === 0 && (ch === ',' || /\s/.test(ch))) {
      endCompound();
      if (ch === ',') {
        list.push(compounds);
        compounds = [];
      }
    } else current += ch;
  }
  endCompound();
  list.push(compounds);
  return list;
};

const compile = (selector: string): Complex[] => {
  let compiled = cache.get(selector);
  if (!compiled) {
    compiled = partsOf(selector).map((compounds) => compounds.map(compileCompound));
    cache.set(selector, compiled);
  }
  return compiled;
};

const matchesCompound = (el: HTMLElement, c: Compound): boolean => c.every((check) => check(el));

const matchesComplex = (el: HTMLElement, sel: Complex): boolean => {
  let i = sel.length - 1;
  const last = sel[i];
  if (!last || !matchesCompound(el, last)) return false;
  i--;
  for (let p = el.parentNode; i >= 0 && p && p.nodeType === 1 && p.rawTagName; p = p.parentNode) {
    const c = sel[i];
    if (c && matchesCompound(p, c)) i--;
  }
  return i < 0;
};

/** Where a compound's candidates come from: its id, else its class, else its attribute name and/or its tag. */
interface Key {
  id?: string;
  cls?: string;
  attr?: string;
  tag?: string;
}

const keyOf = (src: string): Key => {
  // Attribute values may contain "." or "#" ("twitter.com/"), so they are masked before looking for id and class.
  const bare = src.replace(/\[[^\]]*\]/g, '[]');
  const id = /#([\w-]+)/.exec(bare);
  if (id?.[1]) return { id: id[1] };
  const cls = /\.([\w-]+)/.exec(bare);
  if (cls?.[1]) return { cls: cls[1] };
  const attr = /\[([\w-]+)/.exec(src)?.[1]?.toLowerCase();
  const tag = /^[a-zA-Z][\w-]*/.exec(src)?.[0]?.toLowerCase();
  return { ...(attr ? { attr } : {}), ...(tag ? { tag } : {}) };
};

/** Generic containers: their tag lists are long, so an attribute test on them starts from the attribute's list. */
const CONTAINER_TAGS = new Set(['div', 'span']);

const keyCache = new Map<string, Key[]>();

const walkMatch = (el: HTMLElement, sels: Complex[]): HTMLElement[] => {
  const out: HTMLElement[] = [];
  const visit = (n: HTMLElement) => {
    for (const c of n.childNodes) {
      if (c.nodeType !== 1) continue;
      if (sels.some((s) => matchesComplex(c, s))) out.push(c);
      visit(c);
    }
  };
  visit(el);
  return out;
};

/** The document's candidate list for a key, in document order (attribute lists are built on first use). */
const candidates = (doc: HTMLDocument, key: Key): HTMLElement[] => {
  if (key.id !== undefined) return doc.byId.get(key.id) ?? NONE;
  if (key.cls !== undefined) return doc.byClass.get(key.cls) ?? NONE;
  const byTag = key.tag !== undefined ? (doc.byTag.get(key.tag) ?? NONE) : undefined;
  if (key.attr === undefined) return byTag ?? doc.all;
  if (byTag && !CONTAINER_TAGS.has(key.tag as string)) return byTag;
  return doc.withAttribute(key.attr);
};

const NONE: HTMLElement[] = [];

const sameKeys = (keys: Key[]): boolean => {
  const [k] = keys;
  return keys.every((x) => x.id === k?.id && x.cls === k?.cls && x.attr === k?.attr && x.tag === k?.tag);
};

/** Index of the first element of `list` (sorted by document order) that comes after document position `order`. */
const firstAfter = (list: HTMLElement[], order: number): number => {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((list[mid] as HTMLElement).order <= order) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

/**
 * All descendants of `el` matching `selector`, in document order. Descendants of `el` are exactly the elements
 * whose document position lies in `(el.order, el.end]`, so each candidate list is cut to that range by binary search.
 */
export const qsa = (el: HTMLElement | null | undefined, selector: string): HTMLElement[] => search(el, selector, false);

/** The first descendant of `el` matching `selector`, or null: each list is scanned only up to its first match. */
export const qs = (el: HTMLElement | null | undefined, selector: string): HTMLElement | null =>
  search(el, selector, true)[0] ?? null;

const search = (el: HTMLElement | null | undefined, selector: string, firstOnly: boolean): HTMLElement[] => {
  if (!el) return [];
  const sels = compile(selector);
  let keys = keyCache.get(selector);
  if (!keys) {
    keys = partsOf(selector).map((compounds) => keyOf(compounds.at(-1) ?? ''));
    keyCache.set(selector, keys);
  }
  const doc = el.doc;
  if (!doc) return walkMatch(el, sels);
  const out: HTMLElement[] = [];
  // Two-step selectors ("X a") look for their X first, so that only the subtrees X roots are searched.
  if (sels.every((s) => s.length === 2)) {
    for (let i = 0; i < sels.length; i++) {
      searchWithin(el, doc, sels[i] as Complex, selector, i, keys[i] as Key, firstOnly, out);
    }
    if (sels.length === 1) return out;
    const all = [...new Set(out)].sort((a, b) => a.order - b.order);
    return firstOnly ? all.slice(0, 1) : all;
  }
  // A union whose parts share their subject's key ("X a, Y a"): one pass over one list, already in order.
  if (sels.length > 1 && sameKeys(keys)) {
    const list = candidates(doc, keys[0] as Key);
    for (let j = firstAfter(list, el.order); j < list.length; j++) {
      const cand = list[j] as HTMLElement;
      if (cand.order > el.end) break;
      if (sels.some((sel) => matchesComplex(cand, sel))) {
        out.push(cand);
        if (firstOnly) break;
      }
    }
    return out;
  }
  for (let i = 0; i < sels.length; i++) {
    const sel = sels[i] as Complex;
    const list = candidates(doc, keys[i] as Key);
    for (let j = firstAfter(list, el.order); j < list.length; j++) {
      const cand = list[j] as HTMLElement;
      if (cand.order > el.end) break;
      if (matchesComplex(cand, sel)) {
        out.push(cand);
        if (firstOnly) break;
      }
    }
  }
  if (sels.length > 1) {
    const all = [...new Set(out)].sort((a, b) => a.order - b.order);
    return firstOnly ? all.slice(0, 1) : all;
  }
  return out;
};

/** Whether `el` or one of its ancestors (the root aside) matches `c`. */
const ancestorOrSelfMatches = (el: HTMLElement, c: Compound): boolean => {
  for (let p: HTMLElement | null = el; p && p.nodeType === 1 && p.rawTagName; p = p.parentNode) {
    if (matchesCompound(p, c)) return true;
  }
  return false;
};

/**
 * Whether `el` or an element enclosing it matches `c`, given the document-ordered list every match of `c` is in:
 * an enclosing element comes before `el` and its range reaches it, so only the list's head is read, never the
 * chain of ancestors up to the root.
 */
const enclosedBy = (el: HTMLElement, c: Compound, list: HTMLElement[]): boolean => {
  for (let i = 0; i < list.length; i++) {
    const a = list[i] as HTMLElement;
    if (a.order > el.order) return false;
    if (a.end >= el.order && a.rawTagName && matchesCompound(a, c)) return true;
  }
  return false;
};

/** Keys of the ancestor compound of each part of a two-step selector, by selector. */
const ancestorKeyCache = new Map<string, Key[]>();

/**
 * Matches of `A B` inside `scope`: a descendant of `scope` matching B with a proper ancestor (the root aside)
 * matching A. When `scope` or one of its ancestors matches A, every B inside qualifies; otherwise only the
 * subtrees of the A elements inside `scope` are searched (the outermost ones, in document order).
 */
const searchWithin = (
  scope: HTMLElement,
  doc: HTMLDocument,
  sel: Complex,
  selector: string,
  part: number,
  subjectKey: Key,
  firstOnly: boolean,
  out: HTMLElement[],
): void => {
  const outer = sel[0] as Compound;
  const subject = sel[1] as Compound;
  const list = candidates(doc, subjectKey);
  const collect = (from: number, to: number): boolean => {
    for (let j = firstAfter(list, from); j < list.length; j++) {
      const cand = list[j] as HTMLElement;
      if (cand.order > to) break;
      if (matchesCompound(cand, subject)) {
        out.push(cand);
        if (firstOnly) return true;
      }
    }
    return false;
  };
  let keys = ancestorKeyCache.get(selector);
  if (!keys) {
    keys = partsOf(selector).map((compounds) => keyOf(compounds[0] ?? ''));
    ancestorKeyCache.set(selector, keys);
  }
  const outerKey = keys[part] as Key;
  // An A with an id or a class that the page does not have at all: nothing to look for (most unions of layout
  // variants, ".HiHjCd a, .IThcWe a, …", name classes a given page lacks).
  if ((outerKey.id !== undefined || outerKey.cls !== undefined) && candidates(doc, outerKey).length === 0) return;
  // An A found only by its attribute name would mean reading many attribute lists: the subjects are tested instead,
  // each walking up to `scope` only (whether `scope` or an ancestor of it is an A is settled once).
  if (
    outerKey.id === undefined &&
    outerKey.cls === undefined &&
    (outerKey.tag === undefined || (outerKey.attr !== undefined && CONTAINER_TAGS.has(outerKey.tag)))
  ) {
    let above: boolean | undefined;
    for (let j = firstAfter(list, scope.order); j < list.length; j++) {
      const cand = list[j] as HTMLElement;
      if (cand.order > scope.end) break;
      if (!matchesCompound(cand, subject)) continue;
      let inside = false;
      for (let p = cand.parentNode; p && p !== scope; p = p.parentNode) {
        if (matchesCompound(p, outer)) {
          inside = true;
          break;
        }
      }
      if (!inside) {
        above ??= ancestorOrSelfMatches(scope, outer);
        if (!above) continue;
      }
      out.push(cand);
      if (firstOnly) return;
    }
    return;
  }
  const outerList = candidates(doc, outerKey);
  // A short list is read from its head; a long one (a common tag or class) costs more than the ancestor chain.
  if (outerList.length <= 64 ? enclosedBy(scope, outer, outerList) : ancestorOrSelfMatches(scope, outer)) {
    collect(scope.order, scope.end);
    return;
  }
  let coveredTo = scope.order;
  for (let j = firstAfter(outerList, scope.order); j < outerList.length; j++) {
    const a = outerList[j] as HTMLElement;
    if (a.order > scope.end) break;
    if (a.order <= coveredTo || !matchesCompound(a, outer)) continue;
    coveredTo = a.end;
    if (collect(a.order, a.end)) return;
  }
};

/** `el` itself or its nearest ancestor matching `selector`. */
export const closest = (el: HTMLElement, selector: string): HTMLElement | null => {
  const sels = compile(selector);
  for (let p: HTMLElement | null = el; p && p.nodeType === 1 && p.rawTagName; p = p.parentNode) {
    if (sels.some((s) => matchesComplex(p as HTMLElement, s))) return p;
  }
  return null;
};
