/**
 * node-html-parser's rules for building the tree (which tags are void, which opening or closing tag closes which
 * open element, which bodies stay raw text), and what the builder looks up about a tag name, once per name.
 */

export const VOID = new Set(
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
export const CLOSED_BY_OPENING = table({
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
export const CLOSED_BY_CLOSING = table({
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
export const P_NOT_CLOSED_BY = new Set(['a', 'audio', 'del', 'ins', 'map', 'noscript', 'video']);
/** Elements whose content is kept as raw text (what the parser asked node-html-parser for). */
const BLOCK_TEXT = new Set(['noscript', 'pre', 'textarea']);
/** Raw-text bodies the tree leaves out. Google writes these tags in lower case; `<SCRIPT>` is tokenized. */
const SKIPPED_BODIES = new Set(['script', 'style', 'svg']);

/** What the builder needs to know about a tag name as written, worked out once per distinct name. */
export interface TagInfo {
  lower: string;
  isVoid: boolean;
  blockText: boolean;
  /** A raw-text body that the tree leaves out. */
  skipBody: boolean;
  /** Small number naming the entry, for per-document arrays; -1 once the table is full. */
  index: number;
}

const TAG_INFO = new Map<string, TagInfo>();

export const tagInfo = (tag: string): TagInfo => {
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
