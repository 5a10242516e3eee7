import { type HTMLElement, parseDocument } from './dom/index.js';

/**
 * Deferred fragments: Google ships parts of a result page (the AI overview's full source list, the answers of
 * "People also ask") not as markup but as `window.jsl.dh('<element id>','<escaped HTML>')` in an inline script.
 * Run by the browser, the call fills the (empty) element with that id with the markup; a page fetched without
 * running JavaScript has only the empty element and the script. This module finds such a call, unescapes its
 * string as JavaScript would and parses it with our own tree, so the fragment can be read as the rendered page
 * would be.
 */

/** A `jsl.dh('<id>','…')` call (either quote): its target id, and its markup string's body `[start, end)`. */
export interface DeferredCall {
  id: string;
  /** The first character of the markup string's body. */
  start: number;
  /** The quote that closes the markup string, -1 when the page ends before it does. */
  end: number;
}

const CALL = 'jsl.dh(';

/**
 * The call's head: target id and markup string, each quoted. Google writes `'…'` (2020–25) or `"…"` (some 2025–26
 * pages); the id is a token (`4vzwZf3kHrih5NoP4bSC0A4__28`, also `kp:/m/…` ones), never with a quote or backslash.
 */
const HEAD = /jsl\.dh\((['"])([^'"\\\s]+)\1,(['"])/y;

/** The call whose `jsl.dh(` is at `at`, or undefined when something else is written there. */
const callAt = (raw: string, at: number): DeferredCall | undefined => {
  HEAD.lastIndex = at;
  const m = HEAD.exec(raw);
  if (!m) return undefined;
  const start = at + m[0].length;
  return { id: m[2] as string, start, end: stringEnd(raw, start, m[3] as string) };
};

/**
 * The last call that starts before `at` (passing over `jsl.dh(this.id,…)` and other calls with no quoted id): the
 * one whose string `at` is inside of, if any is, which its `end` tells.
 */
export const callBefore = (raw: string, at: number): DeferredCall | undefined => {
  for (let c = raw.lastIndexOf(CALL, at); c >= 0; c = c > 0 ? raw.lastIndexOf(CALL, c - 1) : -1) {
    const call = callAt(raw, c);
    if (call) return call;
  }
  return undefined;
};

/**
 * A call's head whatever its first argument: a quoted id, or an expression such as `this.id` (2025–26 pages fill their
 * footer with `jsl.dh(this.id,"…")` from a script inside the element).
 */
const ANY_HEAD = /jsl\.dh\((?:(['"])([^'"\\\s]+)\1|[\w.$]{1,40}),(['"])/y;

/**
 * The call whose markup string holds `at`, whatever its first argument (its `id` is '' when that is not a quoted
 * id), or undefined when `at` is not inside one: a fragment of the page that only a script puts in place.
 */
export const callAround = (raw: string, at: number, within = 256 * 1024): DeferredCall | undefined => {
  // V8's lastIndexOf compares character by character: it looks back over a bounded stretch only (a fragment's string
  // is tens of kB), never the whole page
  const from = Math.max(0, at - within);
  const before = raw.slice(from, at);
  for (let k = before.lastIndexOf(CALL); k >= 0; k = k > 0 ? before.lastIndexOf(CALL, k - 1) : -1) {
    const c = from + k;
    ANY_HEAD.lastIndex = c;
    const m = ANY_HEAD.exec(raw);
    if (!m) continue;
    const start = c + m[0].length;
    if (start > at) continue;
    const end = stringEnd(raw, start, m[3] as string);
    return end > at ? { id: m[2] ?? '', start, end } : undefined;
  }
  return undefined;
};

/** Whether `el` holds nothing: no element, no text but whitespace. */
export const isEmpty = (el: HTMLElement): boolean =>
  !el.childNodes.some((c) => c.nodeType === 1 || c.text.trim() !== '');

/**
 * The fragments that fill a page's elements at or after `from`, by element id (undefined for an id no call fills).
 * A call runs after the element it fills is in the document, so none before `from` fills one. A lookup searches for
 * the id itself, long and rare enough to be skipped through quickly (stopping at every `jsl.dh(` of a 1 MB page
 * takes ~4x as long), and takes the first occurrence that is a call's target, in either quote; other occurrences
 * (the element's own `id="…"`, an `aria-controls`, the escaped markup that holds it) are few. It starts where the
 * previous call was found, as Google writes the calls of neighbouring elements one after another, so most lookups
 * read a few kB; an id not found from there is searched for from `from` on, so a miss reads the rest of the page.
 * A call may fill its element with an empty element of the same id, which a later call for that id fills in turn
 * (2024 "People also ask" answers on president-usa); the browser ends with the later markup, and so does this.
 */
export const deferredFragments = (raw: string, from: number): ((id: string) => HTMLElement | undefined) => {
  let near = from;
  /** The first call for `id` from `start` on. */
  const scan = (id: string, start: number): DeferredCall | undefined => {
    for (let at = raw.indexOf(id, start); at >= 0; at = raw.indexOf(id, at + id.length)) {
      const head = at - CALL.length - 1;
      const call = head >= 0 && raw.startsWith(CALL, head) ? callAt(raw, head) : undefined;
      if (call?.id === id) {
        near = head;
        return call;
      }
    }
    return undefined;
  };
  /** The first call for `id` after `after`; else from where the last call was found, else from `from` on. */
  const find = (id: string, after: number | undefined): DeferredCall | undefined =>
    after !== undefined ? scan(id, after) : (scan(id, near) ?? (near > from ? scan(id, from) : undefined));
  return (id) => {
    for (let call = find(id, undefined); call; call = find(id, call.start)) {
      const fragment = fragmentOf(raw, call);
      const again = fragment?.doc?.byId.get(id)?.[0];
      if (!again || !isEmpty(again)) return fragment;
    }
    return undefined;
  };
};

/** The call's markup as JavaScript reads the string; undefined when it is not closed or is badly escaped. */
const markupOf = (raw: string, call: DeferredCall): string | undefined =>
  call.end < 0 ? undefined : unescapeJs(raw, call.start, call.end);

/** The call's markup parsed as a fragment (its own document); undefined as for `markupOf`. */
export const fragmentOf = (raw: string, call: DeferredCall): HTMLElement | undefined => {
  const markup = markupOf(raw, call);
  return markup === undefined ? undefined : parseDocument(markup).root;
};

/** Where the string literal quoted with `quote` that `at` is inside of ends: its closing quote, or -1. */
const stringEnd = (raw: string, at: number, quote = "'"): number => {
  for (let q = raw.indexOf(quote, at); q >= 0; q = raw.indexOf(quote, q + 1)) {
    let slashes = 0;
    while (raw.charCodeAt(q - 1 - slashes) === 92) slashes++;
    if (slashes % 2 === 0) return q;
  }
  return -1;
};

/** Hex digit values by character code (ASCII), -1 for the rest. */
const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i; // 0-9
for (let i = 0; i < 6; i++) HEX[65 + i] = HEX[97 + i] = 10 + i; // A-F, a-f
const hexAt = (s: string, i: number): number => HEX[s.charCodeAt(i)] ?? -1;

/** `\b \f \n \r \t \v` by the code of their letter. */
const SINGLE: Record<number, number> = { 98: 8, 102: 12, 110: 10, 114: 13, 116: 9, 118: 11 };
const UTF16 = new TextDecoder('utf-16le');
/** A Uint16Array's bytes are in the platform's order; the decoder reads them as little-endian. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * The text of a JavaScript string literal's body, `s` from `from` to `to`: `\x3c`, `\u003d`, `\u{1F600}`, `\\`,
 * `\'`, `\n`, `\0`, any other escaped character as itself, a backslash before a line break continuing the line.
 * Undefined when an escape is malformed (`\x4`, `\u12`) or octal (`\1`, `\01`): strict JavaScript refuses them
 * and no serializer writes them, so they are not guessed at. The code units go into an array decoded at once (a
 * regular expression with a callback takes ~4x as long on a 30 kB list); text with surrogates is put together unit
 * by unit instead, since the decoder would replace a lone one that JavaScript keeps.
 */
export const unescapeJs = (s: string, from = 0, to = s.length): string | undefined => {
  const first = s.indexOf('\\', from);
  if (first < 0 || first >= to) return s.slice(from, to);
  const out = new Uint16Array(to - from);
  let o = 0;
  let surrogates = false;
  for (let i = from; i < to; i++) {
    let c = s.charCodeAt(i);
    if (c === 92) {
      if (++i >= to) return undefined;
      const e = s.charCodeAt(i);
      if (e === 120) {
        const x = i + 2 < to ? (hexAt(s, i + 1) << 4) | hexAt(s, i + 2) : -1;
        if (x < 0) return undefined;
        c = x;
        i += 2;
      } else if (e === 117 && s.charCodeAt(i + 1) === 123) {
        const close = s.indexOf('}', i);
        const digits = close > 0 && close < to ? s.slice(i + 2, close) : '';
        const cp = /^[0-9a-fA-F]{1,6}$/.test(digits) ? Number.parseInt(digits, 16) : -1;
        if (cp < 0 || cp > 0x10ffff) return undefined;
        i = close;
        c = cp;
        if (cp > 0xffff) {
          out[o++] = 0xd800 + ((cp - 0x10000) >> 10);
          c = 0xdc00 + ((cp - 0x10000) & 1023);
        }
      } else if (e === 117) {
        let u = 0;
        for (let k = 1; k <= 4; k++) u = i + k < to && u >= 0 ? (u << 4) | hexAt(s, i + k) : -1;
        if (u < 0) return undefined;
        c = u;
        i += 4;
      } else if (e >= 48 && e <= 57) {
        const next = s.charCodeAt(i + 1);
        if (e !== 48 || (i + 1 < to && next >= 48 && next <= 57)) return undefined;
        c = 0;
      } else if (e === 13 || e === 10 || e === 0x2028 || e === 0x2029) {
        if (e === 13 && i + 1 < to && s.charCodeAt(i + 1) === 10) i++;
        continue;
      } else c = SINGLE[e] ?? e;
    }
    if ((c & 0xf800) === 0xd800) surrogates = true;
    out[o++] = c;
  }
  const units = out.subarray(0, o);
  if (LITTLE_ENDIAN && !surrogates) return UTF16.decode(units);
  let text = '';
  for (let k = 0; k < o; k += 4096) text += String.fromCharCode(...units.subarray(k, k + 4096));
  return text;
};
