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

/** Reads one page's tokens in order: `next(from, m)` fills `m` with the first token at or after `from`. */
export const createTokenizer = (data: string) => {
  const n = data.length;
  /** Every token ends with a `>`: none starts after the page's last one. */
  const lastGt = data.lastIndexOf('>');
  /** From here on no comment closes (the page holds no `-->` after it). */
  let noCommentFrom = Number.POSITIVE_INFINITY;
  /** The last search for each quote: where it began and what it found (-1: no such quote after it). */
  const quoteFrom = [0, 0];
  const quoteAt = [-2, -2];

  /** The next `quote` after `i`, or -1; a search that found none answers every later one. */
  const closingQuote = (quote: number, i: number): number => {
    const k = quote === 34 ? 0 : 1;
    const at = quoteAt[k] as number;
    if (at === -1 && i >= (quoteFrom[k] as number)) return -1;
    if (at > i && i >= (quoteFrom[k] as number)) return at;
    const found = data.indexOf(quote === 34 ? '"' : "'", i + 1);
    quoteFrom[k] = i;
    quoteAt[k] = found;
    return found;
  };

  /**
   * Whether the attribute text may stop at `x` and the tag still end: `x` starts the pattern's next group (a space
   * with a `>` somewhere after it) or its end (`>` or `/>`).
   */
  const canStop = (x: number): boolean => {
    const c = data.charCodeAt(x);
    if (c === 62) return true;
    if (c === 47) return data.charCodeAt(x + 1) === 62;
    return lastGt > x && isSpace(c);
  };

  /**
   * The lazy `[^>]*?` from `i`, with its optional quoted value: where the attribute text may stop next, taking a
   * quoted value whenever the tag can still end after it. Never passes a `>` (canStop holds there).
   */
  const lazyRun = (from: number): number => {
    for (let i = from; ; i++) {
      const c = data.charCodeAt(i);
      // `?`, `@`, letters and the other ASCII characters above `>` can neither open a value nor stop the text
      if (c > 62 && c < 128) continue;
      if (c === 34 || c === 39) {
        const z = closingQuote(c, i);
        if (z >= 0 && canStop(z + 1)) return z + 1;
      }
      if (canStop(i)) return i;
    }
  };

  /**
   * The attribute text from `x` (right after the tag name) to the end of the tag, into `m`; false when no tag ends
   * there. The pattern repeats `\s+` then the lazy run; it leaves the repetition only where no space follows.
   */
  const attributes = (x: number, m: Markup): boolean => {
    let i = x;
    for (;;) {
      const c = data.charCodeAt(i);
      if (lastGt > i && isSpace(c)) {
        i++;
        while (isSpace(data.charCodeAt(i))) i++;
        i = lazyRun(i);
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

  const comment = (p: number, m: Markup): boolean => {
    if (p + 4 >= noCommentFrom) return false;
    const close = data.indexOf('-->', p + 4);
    if (close < 0) {
      noCommentFrom = p + 4;
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
  const tag = (p: number, q: number, m: Markup): boolean => {
    let r = q + 1;
    let code = data.charCodeAt(q);
    let ascii = true;
    for (let c = data.charCodeAt(r); r < n && isNameChar(c); c = data.charCodeAt(++r)) {
      if (c < 128) code = code * 128 + c;
      else ascii = false;
    }
    // The name is greedy; when no tag ends after all of it the pattern gives characters back, which helps only
    // where one of them is a space as well as a name character (U+1680, U+FEFF).
    let x = r;
    if (!canStop(x)) {
      x = -1;
      for (let k = r - 1; k > q; k--) {
        if (lastGt > k && isSpace(data.charCodeAt(k))) {
          x = k;
          break;
        }
      }
      if (x < 0) return false;
      ascii = false;
    }
    if (!attributes(x, m)) return false;
    m.start = p;
    m.comment = false;
    m.leadingSlash = q === p + 2 ? '/' : '';
    m.tagName = ascii && x - q <= 7 ? internName(code, data, q, x) : data.slice(q, x);
    return true;
  };

  return {
    next(from: number, m: Markup): boolean {
      // Tags usually follow each other directly ("</div></div>"): look at the next character before searching.
      let p = data.charCodeAt(from) === 60 ? from : data.indexOf('<', from);
      for (; p >= 0 && p < lastGt; p = data.indexOf('<', p + 1)) {
        const c1 = data.charCodeAt(p + 1);
        if (c1 === 33) {
          if (data.startsWith('<!--', p) && comment(p, m)) return true;
          continue;
        }
        const q = c1 === 47 ? p + 2 : p + 1;
        if (isLetter(data.charCodeAt(q)) && tag(p, q, m)) return true;
      }
      return false;
    },
  };
};
