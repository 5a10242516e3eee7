import type { HTMLElement } from 'node-html-parser';

/**
 * A small CSS selector matcher for the subset this parser uses (tag, #id, .class, [attr], [attr="v"], [attr^="v"],
 * [attr*="v"], descendant combinator, comma lists). node-html-parser delegates to css-select, whose per-call
 * overhead made the feature probes cost more than building the DOM; this walks the tree once per query with
 * precompiled checks instead.
 */
type Check = (el: HTMLElement) => boolean;
type Compound = Check[];
/** One complex selector: compounds from the outermost ancestor to the subject. */
type Complex = Compound[];

const cache = new Map<string, Complex[]>();

const attrCheck = (name: string, op: string | undefined, value: string | undefined): Check => {
  if (!op) return (el) => el.getAttribute(name) !== undefined;
  const v = value ?? '';
  if (op === '=') return (el) => el.getAttribute(name) === v;
  if (op === '^=') return (el) => el.getAttribute(name)?.startsWith(v) ?? false;
  return (el) => el.getAttribute(name)?.includes(v) ?? false;
};

const classCheck =
  (cls: string): Check =>
  (el) => {
    const c = el.getAttribute('class');
    if (c === undefined) return false;
    const i = c.indexOf(cls);
    if (i < 0) return false;
    return ` ${c} `.includes(` ${cls} `);
  };

const TOKEN = /([a-zA-Z][\w-]*)|#([\w-]+)|\.([\w-]+)|\[([\w-]+)(?:(\^=|\*=|=)"([^"]*)")?\]/y;

const compileCompound = (src: string): Compound => {
  const checks: Compound = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < src.length) {
    const m = TOKEN.exec(src);
    if (!m) throw new Error(`unsupported selector: ${src}`);
    if (m[1]) {
      const tag = m[1].toLowerCase();
      checks.push((el) => el.rawTagName?.toLowerCase() === tag);
    } else if (m[2]) {
      const id = m[2];
      checks.push((el) => el.id === id);
    } else if (m[3]) checks.push(classCheck(m[3]));
    else if (m[4]) checks.push(attrCheck(m[4], m[5], m[6]));
  }
  return checks;
};

const compile = (selector: string): Complex[] => {
  let compiled = cache.get(selector);
  if (!compiled) {
    compiled = selector.split(',').map((part) => part.trim().split(/\s+/).map(compileCompound));
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

/**
 * One pass over the document builds lists of elements by tag, id, class and attribute name, in document order.
 * Every query then starts from the short list for its subject's most selective part instead of walking the tree.
 */
interface TreeIndex {
  order: Map<HTMLElement, number>;
  byKey: Map<string, HTMLElement[]>;
}

const indexes = new WeakMap<HTMLElement, TreeIndex>();

const push = (m: Map<string, HTMLElement[]>, k: string, el: HTMLElement) => {
  const l = m.get(k);
  if (l) l.push(el);
  else m.set(k, [el]);
};

const buildIndex = (top: HTMLElement): TreeIndex => {
  const order = new Map<HTMLElement, number>();
  const byKey = new Map<string, HTMLElement[]>();
  const visit = (el: HTMLElement) => {
    for (const c of el.childNodes) {
      if (c.nodeType !== 1) continue;
      const e = c as HTMLElement;
      order.set(e, order.size);
      push(byKey, `t:${e.rawTagName?.toLowerCase()}`, e);
      const attrs = e.rawAttributes;
      for (const name in attrs) {
        push(byKey, `a:${name}`, e);
        if (name === 'class') for (const cls of (attrs[name] ?? '').split(/\s+/)) if (cls) push(byKey, `c:${cls}`, e);
        if (name === 'id') push(byKey, `i:${attrs[name]}`, e);
      }
      visit(e);
    }
  };
  visit(top);
  return { order, byKey };
};

const topOf = (el: HTMLElement): HTMLElement => {
  let t = el;
  while (t.parentNode) t = t.parentNode;
  return t;
};

const indexFor = (el: HTMLElement): TreeIndex => {
  const top = topOf(el);
  let idx = indexes.get(top);
  if (!idx) {
    idx = buildIndex(top);
    indexes.set(top, idx);
  }
  return idx;
};

/** The index key of a compound's most selective part: id, then class, then attribute name, then tag. */
const keyOf = (src: string): string => {
  // Attribute values may contain "." or "#" ("twitter.com/"), so they are masked before looking for id and class.
  const bare = src.replace(/\[[^\]]*\]/g, '[]');
  const id = /#([\w-]+)/.exec(bare);
  if (id) return `i:${id[1]}`;
  const cls = /\.([\w-]+)/.exec(bare);
  if (cls) return `c:${cls[1]}`;
  const attr = /\[([\w-]+)/.exec(src);
  if (attr) return `a:${attr[1]}`;
  return `t:${/^[a-zA-Z][\w-]*/.exec(src)?.[0]?.toLowerCase()}`;
};

const keyCache = new Map<string, string[]>();

const isInside = (el: HTMLElement, scope: HTMLElement): boolean => {
  for (let p = el.parentNode; p; p = p.parentNode) if (p === scope) return true;
  return false;
};

const walkMatch = (el: HTMLElement, sels: Complex[]): HTMLElement[] => {
  const out: HTMLElement[] = [];
  const visit = (n: HTMLElement) => {
    for (const c of n.childNodes) {
      if (c.nodeType !== 1) continue;
      const e = c as HTMLElement;
      if (sels.some((s) => matchesComplex(e, s))) out.push(e);
      visit(e);
    }
  };
  visit(el);
  return out;
};

/** All descendants of `el` matching `selector`, in document order. */
export const qsa = (el: HTMLElement | null | undefined, selector: string): HTMLElement[] => {
  if (!el) return [];
  const sels = compile(selector);
  let keys = keyCache.get(selector);
  if (!keys) {
    keys = selector.split(',').map((part) => keyOf(part.trim().split(/\s+/).at(-1) ?? ''));
    keyCache.set(selector, keys);
  }
  const idx = indexFor(el);
  const scoped = el.parentNode !== null;
  // A common key ("span", "a[href]") inside one result box: walking the small subtree beats filtering a long list.
  if (scoped && keys.some((k) => (idx.byKey.get(k)?.length ?? 0) > 150)) return walkMatch(el, sels);
  const out: HTMLElement[] = [];
  sels.forEach((sel, i) => {
    for (const cand of idx.byKey.get(keys[i] ?? '') ?? []) {
      if (matchesComplex(cand, sel) && (!scoped || isInside(cand, el))) out.push(cand);
    }
  });
  if (sels.length > 1) {
    const unique = [...new Set(out)];
    return unique.sort((a, b) => (idx.order.get(a) ?? 0) - (idx.order.get(b) ?? 0));
  }
  return out;
};

/** The first descendant of `el` matching `selector`, or null. */
export const qs = (el: HTMLElement | null | undefined, selector: string): HTMLElement | null =>
  qsa(el, selector)[0] ?? null;

/** `el` itself or its nearest ancestor matching `selector`. */
export const closest = (el: HTMLElement, selector: string): HTMLElement | null => {
  const sels = compile(selector);
  for (let p: HTMLElement | null = el; p && p.nodeType === 1 && p.rawTagName; p = p.parentNode) {
    if (sels.some((s) => matchesComplex(p as HTMLElement, s))) return p;
  }
  return null;
};
