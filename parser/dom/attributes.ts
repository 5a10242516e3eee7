/**
 * Attribute text read as node-html-parser reads it (its regexes, replaced by character scans that stop where they
 * stop): all attributes of an element on first use, and `id` and `class` of every element while the tree is built.
 */

/** `\s` of a JavaScript regex, by code unit. */
export const isSpace = (c: number): boolean =>
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

const NO_ATTRIBUTES: Map<string, string | null> = new Map();

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
export const parseAttributes = (a: string): Map<string, string | null> => {
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

/** Drops the page `keyAttributes` last read (its text is the document's to keep, not the scanner's). */
export const forgetPage = (): void => {
  EQUALS.text = '';
};

/** Out-parameters of keyAttributes (no object per element). */
export const KEY = { id: '', cls: '' };

/**
 * `id` and `class` exactly as node-html-parser's tokenizer reads them with
 * `/(?:^|\s)(id|class)\s*=\s*('[^']*'|"[^"]*"|\S+)/gi` (anywhere in the attribute text, last one wins), by a
 * character scan instead of a regex. Reads the attribute text `a.slice(base, n)` where it lies (usually inside the
 * parsed page itself, so that no copy of it is scanned), into KEY.
 */
export const keyAttributes = (a: string, base: number, n: number): void => {
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
export const splitClasses = (cls: string): string[] => {
  for (let i = 0; i < cls.length; i++) {
    const c = cls.charCodeAt(i);
    if (c < 32 || c > 126) return cls.split(/\s+/);
  }
  return cls.split(' ');
};
