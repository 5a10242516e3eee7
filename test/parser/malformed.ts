import fc from 'fast-check';

/**
 * Generated markup, broken in the ways a proxy, a captive portal or a truncated response breaks it: tags with
 * attributes and no `>`, quotes that never close, stray `<` and `>`, comments that never end, non-ASCII and
 * space-like characters inside tag names, raw-text bodies left open.
 */

const PLAIN_NAMES = ['a', 'div', 'span', 'DIV', 'p', 'li', 'td', 'über', 'a\u1680b', 'x-y', 'a[b', 'b\u00a0c'];
const RAW_TEXT_NAMES = ['svg', 'script', 'style'];
const attrName = fc.constantFrom('class', 'id', 'href', 'data-x', 'y', 'ID', '"', "'", 'a"b', '=', '/');
const attrValue = fc.constantFrom(
  '"x"',
  "'y'",
  '"a>b"',
  '"unclosed',
  "'unclosed",
  'v/',
  '"a"b',
  "'it\"s'",
  'a=b',
  '',
  '"<i>"',
);
const space = fc.constantFrom(' ', '  ', '\t', '\n', '\u00a0', '\u1680', '\ufeff');
const attribute = fc
  .tuple(space, attrName, fc.option(fc.tuple(fc.constantFrom('=', ' = ', '='), attrValue), { nil: undefined }))
  .map(([s, n, v]) => `${s}${n}${v ? v.join('') : ''}`);
const tagEnd = fc.constantFrom('>', '/>', ' >', ' / >', '', ' ', '/');

/** A start or end tag, maybe never closed. */
const tag = (maxAttributes: number, names: string[]) =>
  fc
    .tuple(
      fc.constantFrom('<', '</', '<', '<'),
      fc.constantFrom(...names),
      fc.array(attribute, { maxLength: maxAttributes }),
      tagEnd,
    )
    .map(([open, name, attrs, end]) => `${open}${name}${attrs.join('')}${end}`);

const junk = fc.constantFrom(
  '<',
  '>',
  '<!--',
  '-->',
  '<!-- c -->',
  '<!',
  '</',
  '"',
  "'",
  'text ',
  '&amp;',
  '&copy',
  '<<',
  '< a',
  '<a',
  '=',
  '/',
  '\u1680',
  '\ufeff',
  '</div>',
  '<p>',
);

/** One piece of a page. */
const fragment = (maxAttributes: number, names = [...PLAIN_NAMES, ...RAW_TEXT_NAMES]) =>
  fc.oneof(
    { arbitrary: tag(maxAttributes, names), weight: 3 },
    { arbitrary: junk, weight: 2 },
    fc.string({ maxLength: 6 }),
  );

/** A short malformed snippet (small enough for a backtracking tokenizer to finish on). */
export const snippet = fc.array(fragment(3), { maxLength: 6 }).map((parts) => parts.join(''));

/** The same without script, style or svg tags (whose bodies the tree leaves out). */
export const plainSnippet = fc.array(fragment(3, PLAIN_NAMES), { maxLength: 6 }).map((parts) => parts.join(''));

/**
 * A malformed page of `bytes` characters: generated pieces repeated to the size, cut at a generated point, and
 * ending in a tag with many attributes and no `>` (what made the backtracking tokenizer's time double per attribute).
 */
export const page = (bytes: number) =>
  fc
    .tuple(
      fc.array(fragment(12), { minLength: 1, maxLength: 40 }),
      fc.nat(),
      fc.array(attribute, { minLength: 20, maxLength: 60 }),
    )
    .map(([parts, cut, tail]) => {
      const unit = parts.join('') || '<a ';
      const end = `<div class="x"${tail.join('')}`;
      const body = unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes - end.length);
      return body.slice(0, body.length - (cut % Math.min(64, body.length + 1))) + end;
    });
