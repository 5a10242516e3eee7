import { HTMLElement as NhpElement, TextNode as NhpText } from 'node-html-parser';

/**
 * Entity decoding as node-html-parser decodes (attribute mode for attribute values, legacy mode for text): the few
 * common entities directly, anything else (or any doubt) through node-html-parser's own decoder.
 */

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
