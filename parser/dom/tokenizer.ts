import { isSpace } from './attributes.js';

/**
 * The tokenizer: where each comment and tag of a page starts and ends. It splits a page exactly where
 * node-html-parser's tokenizer pattern (v9) does,
 *
 *   <!--[\s\S]*?-->|<(\/?)(NAME)((?:\s+[^>]*?(?:'[^']*'|"[^"]*")?)*)\s*(\/?)>
 *
 * (NAME: an ASCII letter, then the characters `isNameChar` lists), so that the tree is the one that
 * library builds, but in one pass that never goes back. A backtracking engine tries every way to split a tag's
 * attribute text between the pattern's repeated groups before it gives up on a tag with no `>` after it: that
 * doubled in time with every attribute, and a few hundred bytes (`<a ` thirty times, or a page cut off inside its
 * widest tag) held a parse thread for minutes. Here each choice the pattern would try first is taken only when it can
 * still end in a tag, which one look at the next character and at where the page's last `>` lies settles, so the
 * first choice that can succeed is the one the pattern settles on, found without trying the others. A `<` that
 * cannot start a tag is text, as it is for the pattern (and for browsers): an unterminated tag is the text it holds.
 * Every character is looked at a bounded number of times; test/parser/tokenizer.test.ts holds it to the pattern on
 * generated markup and to linear time on generated malformed pages.
 */

/** One token: a comment, or a start or end tag with the pattern's four groups. */
export interface Markup {
  start: number;
  end: number;
  comment: boolean;
  leadingSlash: string;
  tagName: string;
  /** Length of the attribute text, which starts right after the tag name. */
  attributesLength: number;
  closingSlash: string;
}

export const newMarkup = (): Markup => ({
  start: 0,
  end: 0,
  comment: false,
  leadingSlash: '',
  tagName: '',
  attributesLength: 0,
  closingSlash: '',
});

/**
 * Characters allowed in a tag name after its first letter, as the pattern's class reads them: it writes `\x37F-\u1FFF`
 * meaning U+037F–U+1FFF, but `\x37` is `7` and the range runs from `F` to U+1FFF, so `[`, `{`, `~` and every character
 * up to U+1FFF belong to a name too. The tree is node-html-parser's, so the class is taken as it reads.
 */
const NAME_CHAR = new Uint8Array(128);
for (const c of '-.:0123456789@ABCDE') NAME_CHAR[c.charCodeAt(0)] = 1;
for (let c = 0x46; c < 128; c++) NAME_CHAR[c] = 1;

/** The class above U+007F, its ranges merged (all in the Basic Multilingual Plane), as [from, to] pairs in order. */
const NAME_RANGES = [
  0x80, 0x1fff, 0x200c, 0x200d, 0x203f, 0x2040, 0x2070, 0x218f, 0x2c00, 0x2fef, 0x3001, 0xd7ff, 0xf900, 0xfdcf, 0xfdf0,
  0xfffd,
];

export const isNameChar = (c: number): boolean => {
  if (c < 128) return NAME_CHAR[c] === 1;
  for (let i = 0; i < NAME_RANGES.length; i += 2) {
    if (c < (NAME_RANGES[i] as number)) return false;
    if (c <= (NAME_RANGES[i + 1] as number)) return true;
  }
  return false;
};

const isLetter = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/** Tag names of up to 7 ASCII characters, by a number made of their codes, so that "div" is one string. */
const NAMES = new Map<number, string>();

const internName = (code: number, data: string, q: number, r: number): string => {
  let name = NAMES.get(code);
  if (name === undefined) {
    name = data.slice(q, r);
    if (NAMES.size < 4096) NAMES.set(code, name);
  }
  return name;
};

/** What the tokenizer keeps about one page while it reads it. */
export interface PageState {
  readonly data: string;
  /** Every token ends with a `>`: none starts after the page's last one. */
  readonly lastGt: number;
  /** From here on no comment closes (the page holds no `-->` after it). */
  noCommentFrom: number;
}

/**
 * A page to read tokens from: `nextToken(page, from, m)` fills `m` with the first token at or after `from`. The
 * scanning functions take the page's text and state as arguments rather than closing over them: they run for every
 * character of every tag, and arguments stay in registers where a closure's variables are loaded each time.
 */
export const tokenizerFor = (data: string): PageState => ({
  data,
  lastGt: data.lastIndexOf('>'),
  noCommentFrom: Number.MAX_SAFE_INTEGER,
});

export const nextToken = (state: PageState, from: number, m: Markup): boolean => {
  const data = state.data;
  const lastGt = state.lastGt;
  // Tags usually follow each other directly ("</div></div>"): look at the next character before searching.
  for (let p = data.charCodeAt(from) === 60 ? from : data.indexOf('<', from); p >= 0 && p < lastGt; ) {
    const c1 = data.charCodeAt(p + 1);
    if (c1 === 33) {
      if (data.startsWith('<!--', p) && comment(state, data, p, m)) return true;
    } else {
      const q = c1 === 47 ? p + 2 : p + 1;
      if (isLetter(data.charCodeAt(q)) && tag(data, lastGt, p, q, m)) return true;
    }
    p = data.indexOf('<', p + 1);
  }
  return false;
};

const comment = (state: PageState, data: string, p: number, m: Markup): boolean => {
  if (p + 4 >= state.noCommentFrom) return false;
  const close = data.indexOf('-->', p + 4);
  if (close < 0) {
    state.noCommentFrom = p + 4;
    return false;
  }
  m.start = p;
  m.end = close + 3;
  m.comment = true;
  m.leadingSlash = '';
  m.tagName = '';
  m.attributesLength = 0;
  m.closingSlash = '';
  return true;
};

/** A start or end tag at `p` (`<` or `</` at `q - 1`), into `m`; false when none starts there. */
const tag = (data: string, lastGt: number, p: number, q: number, m: Markup): boolean => {
  const n = data.length;
  let r = q + 1;
  let code = data.charCodeAt(q);
  let ascii = true;
  for (; r < n; r++) {
    const c = data.charCodeAt(r);
    if (c < 128) {
      if (NAME_CHAR[c] !== 1) break;
      code = code * 128 + c;
    } else {
      if (!isNameChar(c)) break;
      ascii = false;
    }
  }
  const after = data.charCodeAt(r);
  // `<div>`, `</div>`: most tags end right after their name
  if (after === 62) {
    m.attributesLength = 0;
    m.closingSlash = '';
    m.end = r + 1;
  } else if (
    !((after === 32 || (after >= 9 && after <= 13)) && plainAttributes(data, lastGt, r, m)) &&
    !attributes(data, lastGt, r, m)
  ) {
    // The name is greedy; when no tag ends after all of it the pattern gives characters back, which helps only
    // where one of them is a space as well as a name character (U+00A0, U+1680, U+FEFF).
    let k = r - 1;
    while (k > q && !(lastGt > k && isSpace(data.charCodeAt(k)))) k--;
    if (k <= q || !attributes(data, lastGt, k, m)) return false;
    r = k;
    ascii = false;
  }
  m.start = p;
  m.comment = false;
  m.leadingSlash = q === p + 2 ? '/' : '';
  m.tagName = ascii && r - q <= 7 ? internName(code, data, q, r) : data.slice(q, r);
  return true;
};

/**
 * The attribute text of a tag as Google writes one (`<div class="a" data-x='b'>`), in one tight scan: quoted values
 * followed by a space, `>` or `/>`, anything else unquoted, up to the first `>` outside them. Where the page is
 * anything else (a quote that does not close or closes before another character, no `>` left) it answers false and
 * `attributes` reads the tag from its start; what it does answer is what `attributes` would (a value that closes
 * before a space is taken by the pattern first whenever a `>` lies after it, and this scan has found one), so the
 * time it wastes on a tag is at most the tag's own length once.
 */
const plainAttributes = (data: string, lastGt: number, x: number, m: Markup): boolean => {
  for (let i = x + 1; i <= lastGt; i++) {
    const c = data.charCodeAt(i);
    if (c === 62) {
      const slash = data.charCodeAt(i - 1) === 47;
      m.attributesLength = (slash ? i - 1 : i) - x;
      m.closingSlash = slash ? '/' : '';
      m.end = i + 1;
      return true;
    }
    if (c === 34 || c === 39) {
      const z = closingQuote(data, c, i);
      if (z < 0 || z >= lastGt) return false;
      const next = data.charCodeAt(z + 1);
      if (!(next === 32 || (next >= 9 && next <= 13) || next === 62 || (next === 47 && data.charCodeAt(z + 2) === 62)))
        return false;
      i = z;
    }
  }
  return false;
};

/**
 * The attribute text from `x` (right after the tag name) to the end of the tag, into `m`; false when no tag ends
 * there. The pattern repeats `\s+` then the lazy run; it leaves the repetition only where no space follows.
 */
const attributes = (data: string, lastGt: number, x: number, m: Markup): boolean => {
  let i = x;
  for (;;) {
    const c = data.charCodeAt(i);
    if (lastGt > i && isSpace(c)) {
      i++;
      while (isSpace(data.charCodeAt(i))) i++;
      i = lazyRun(data, lastGt, i);
      continue;
    }
    m.attributesLength = i - x;
    if (c === 62) {
      m.closingSlash = '';
      m.end = i + 1;
      return true;
    }
    if (c === 47 && data.charCodeAt(i + 1) === 62) {
      m.closingSlash = '/';
      m.end = i + 2;
      return true;
    }
    return false;
  }
};

/** What an ASCII character is to the lazy run: 0 nothing to it, 1 `>`, 2 a quote, 3 `/`, 4 a space. */
const RUN_CLASS = new Uint8Array(128);
RUN_CLASS[62] = 1;
RUN_CLASS[34] = 2;
RUN_CLASS[39] = 2;
RUN_CLASS[47] = 3;
for (const c of [9, 10, 11, 12, 13, 32]) RUN_CLASS[c] = 4;

/**
 * The lazy `[^>]*?` from `i`, with its optional quoted value: where the attribute text may stop next, taking a
 * quoted value whenever the tag can still end after it. Never passes a `>` (canStop holds there). canStop is
 * written out here for the character in hand: this loop sees every character of every tag's attribute text.
 */
const lazyRun = (data: string, lastGt: number, from: number): number => {
  for (let i = from; ; i++) {
    const c = data.charCodeAt(i);
    const kind = c < 128 ? RUN_CLASS[c] : isSpace(c) ? 4 : 0;
    if (kind === 0) continue;
    if (kind === 1) return i;
    if (kind === 2) {
      const z = closingQuote(data, c, i);
      if (z >= 0 && canStop(data, lastGt, z + 1)) return z + 1;
    } else if (kind === 3) {
      if (data.charCodeAt(i + 1) === 62) return i;
    } else if (lastGt > i) return i;
  }
};

/**
 * Whether the attribute text may stop at `x` and the tag still end: `x` starts the pattern's next group (a space
 * with a `>` somewhere after it) or its end (`>` or `/>`).
 */
const canStop = (data: string, lastGt: number, x: number): boolean => {
  const c = data.charCodeAt(x);
  if (c === 62) return true;
  if (c === 47) return data.charCodeAt(x + 1) === 62;
  return lastGt > x && isSpace(c);
};

/**
 * The next `quote` after `i`, or -1. No search needs remembering: it runs only from a quote of its kind, and the
 * scan goes on from there or past the tag's end, never back into what it searched, so the searches for each kind of
 * quote cover the page at most once between them.
 */
const closingQuote = (data: string, quote: number, i: number): number => data.indexOf(quote === 34 ? '"' : "'", i + 1);
