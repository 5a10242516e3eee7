import { isGoogleInternal, textOf, unwrapLink } from '../dom.js';
import type { HTMLDocument, HTMLElement } from '../html.js';
import { qsa } from '../select.js';

/** One item of a block, under SerpApi's field names; fields that the page does not show are left out. */
export type Item = Record<string, unknown>;

/**
 * One target of a carousel or list: its link, the anchors leading there (a video's thumbnail, title and "key
 * moments" links are one card) and the largest element around them that holds no other card's link.
 */
export interface LinkCard {
  link: string;
  anchors: HTMLElement[];
  box: HTMLElement;
}

/** A video's "key moments" link to the same video at a time offset (`&t=765`): same card. */
const keyOf = (link: string): string => link.replace(/([?&])t=\d+s?(&|$)/, '$1').replace(/[?&]$/, '');

/** The cards of a block in page order: one per distinct outside target (Google's own UI links are no cards). */
export const linkCards = (block: HTMLElement): LinkCard[] => {
  const found: Array<{ a: HTMLElement; key: string; link: string }> = [];
  for (const a of qsa(block, 'a[href]')) {
    const link = unwrapLink(a.getAttribute('href'));
    if (!link || !/^https?:\/\//i.test(link) || isGoogleInternal(link)) continue;
    found.push({ a, key: keyOf(link), link });
  }
  const cards = new Map<string, LinkCard>();
  for (const f of found) {
    const card = cards.get(f.key);
    if (card) card.anchors.push(f.a);
    else cards.set(f.key, { link: f.link, anchors: [f.a], box: f.a });
  }
  for (const [key, card] of cards) {
    // Climb while the parent holds no link of another card: the box is the card's own markup, never its neighbour's.
    for (let p = card.box.parentNode; p && p !== block && p.nodeType === 1; p = p.parentNode) {
      const parent = p;
      if (found.some((f) => f.key !== key && f.a.order > parent.order && f.a.order <= parent.end)) break;
      card.box = parent;
    }
  }
  return [...cards.values()];
};

/** A piece of text of a card and the element holding it. Google separates a card's parts into such pieces. */
export interface Leaf {
  text: string;
  el: HTMLElement;
}

/** The text pieces of `el` in document order, whitespace collapsed, empty ones left out. */
export const leavesOf = (el: HTMLElement, out: Leaf[] = []): Leaf[] => {
  for (const c of el.childNodes) {
    if (c.nodeType === 3) {
      const text = c.text.replace(/\s+/g, ' ').trim();
      if (text) out.push({ text, el });
    } else leavesOf(c as HTMLElement, out);
  }
  return out;
};

/** The text pieces inside the card's anchors (an anchor inside another counted once), in document order. */
export const anchorLeaves = (anchors: HTMLElement[]): Leaf[] => {
  const out: Leaf[] = [];
  let end = -1;
  for (const a of anchors) {
    if (a.order <= end) continue;
    leavesOf(a, out);
    end = a.end;
  }
  return out;
};

/** A separator piece between two parts of a line ("·", "•"; 2021 cards used "."). */
export const isSeparator = (text: string): boolean => /^[·•.|—–-]$/.test(text);

/** The clock-style duration Google prints on a video thumbnail ("2:20", "1:16:37"), in every interface language. */
export const DURATION = /^\d{1,2}(?::\d{2}){1,2}$/;

/**
 * The duration badge of a video card: the clock text and the spoken form that screen readers get from the badge's
 * `aria-label` ("2 minutes, 20 seconds", in the interface language). Some layouts print the spoken form again as
 * visible text next to the date; knowing it keeps it out of the date.
 */
export const durationOf = (box: HTMLElement): { text: string; spoken?: string } | undefined => {
  const badge = clockIn(box);
  if (!badge) return undefined;
  for (let e: HTMLElement | null = badge.el, i = 0; e && i < 3; e = e.parentNode, i++) {
    const spoken = e.getAttribute('aria-label');
    if (spoken && spoken !== badge.text) return { text: badge.text, spoken };
  }
  return badge;
};

/** The first clock-style text in `el`, stopping there (a video card's player markup can be large). */
const clockIn = (el: HTMLElement): Leaf | undefined => {
  for (const c of el.childNodes) {
    if (c.nodeType === 3) {
      const text = c.rawText.trim();
      if (text.length <= 8 && DURATION.test(text)) return { text, el };
    } else {
      const found = clockIn(c as HTMLElement);
      if (found) return found;
    }
  }
  return undefined;
};

/** The outermost element around `leaf` (below `limit`) whose text does not run into `stop`'s. */
export const widen = (leaf: Leaf, limit: HTMLElement, stop: HTMLElement): HTMLElement => {
  let el = leaf.el;
  for (let p = el.parentNode; p && p !== limit && p.nodeType === 1; p = p.parentNode) {
    if (stop.order >= p.order && stop.order <= p.end) break;
    el = p;
  }
  return el;
};

/** Whether `inner` lies in `outer`'s subtree (or is it). */
export const within = (inner: HTMLElement, outer: HTMLElement): boolean =>
  inner.order >= outer.order && inner.order <= outer.end;

/**
 * The first descendant of `el` carrying attribute `name`, found by walking the subtree: a card is a few dozen
 * elements, while a selector on an attribute the page index does not cover would search the whole page text.
 */
export const withAttribute = (el: HTMLElement, name: string): HTMLElement | undefined => {
  for (const c of el.childNodes) {
    if (c.nodeType !== 1) continue;
    const e = c as HTMLElement;
    if (e.hasAttribute(name)) return e;
    const inner = withAttribute(e, name);
    if (inner) return inner;
  }
  return undefined;
};

/** The first element matching `selector` inside any of the anchors, in document order. */
export const firstIn = (anchors: HTMLElement[], selector: string): HTMLElement | undefined => {
  for (const a of anchors) {
    const hit = qsa(a, selector).find((e) => textOf(e));
    if (hit) return hit;
  }
  return undefined;
};

/**
 * Pictures a page fills in by script: `google.ldi={"dimg_21":"https://…"}` (deferred URLs) and
 * `var s='data:image/…';var ii=['dimg_7'];_setImagesSrc(ii,s)` (inline pictures), neither of which is in the
 * tree. Found by the start of each script body the tree skipped (a few hundred `startsWith` per page; a search of
 * the whole page text would cost a millisecond), and only when a card asks.
 */
export const pageImages = (root: HTMLElement): ((id: string) => string | undefined) => {
  let map: Map<string, string | [number, number]> | undefined;
  return (id) => {
    map ??= root.doc ? scriptImages(root.doc) : new Map();
    const found = map.get(id);
    if (typeof found !== 'object') return found;
    // An inline picture is cut out of the page (and unescaped) only when a card asks for it.
    const source = (root.doc as HTMLDocument).source;
    const picture = source.slice(found[0], found[1]).replace(/\\x3d/g, '=').replace(/\\\//g, '/');
    const value = isPicture(picture) ? picture : undefined;
    if (value) map.set(id, value);
    else map.delete(id);
    return value;
  };
};

const SET_IMAGES = "(function(){var s='";
const IDS = "';var ii=[";
const LDI_SCRIPT = '(function(){google.';

const scriptImages = (doc: HTMLDocument): Map<string, string | [number, number]> => {
  const map = new Map<string, string | [number, number]>();
  const src = doc.source;
  const inline: Array<[string, number, number]> = [];
  for (let i = 0; i < doc.skipped.length; i += 2) {
    const start = doc.skipped[i] as number;
    const end = doc.skipped[i + 1] as number;
    if (src.startsWith(SET_IMAGES, start)) {
      const ids = src.lastIndexOf(IDS, end);
      const close = ids > start ? src.indexOf(']', ids) : -1;
      if (close < 0 || close > end) continue;
      for (const id of src.slice(ids + IDS.length, close).split(',')) {
        inline.push([id.trim().replace(/^'|'$/g, ''), start + SET_IMAGES.length, ids]);
      }
      continue;
    }
    // Desktop pages start a script with it; mobile pages set it deep inside a longer script, and looking there
    // would mean searching every script.
    if (!src.startsWith(LDI_SCRIPT, start)) continue;
    const ldi = src.slice(start, Math.min(end, start + 80)).indexOf('google.ldi={');
    if (ldi < 0) continue;
    const open = start + ldi + 'google.ldi='.length;
    const close = src.indexOf('}', open);
    if (close < 0 || close > end) continue;
    try {
      for (const [id, url] of Object.entries(JSON.parse(src.slice(open, close + 1)) as Record<string, unknown>)) {
        if (typeof url === 'string' && /^https?:\/\//.test(url)) map.set(id, url);
      }
    } catch {
      // A page whose ldi is no JSON object gives no URLs; the inline pictures still count.
    }
  }
  // A URL the page will load wins over the inline copy of the same picture.
  for (const [id, from, to] of inline) if (!map.has(id)) map.set(id, [from, to]);
  return map;
};

/** A loaded picture: an http(s) URL or an inline image, never the 1×1 placeholder a script later replaces. */
const isPicture = (src: string | undefined): src is string =>
  !!src && (/^https?:\/\//.test(src) || (/^data:image\//.test(src) && src.length > 200));

/** Icons (site favicons, platform logos) are drawn at 16–32 px; a thumbnail never is. */
const isIcon = (img: HTMLElement): boolean => {
  const w = Number(img.getAttribute('width'));
  const h = Number(img.getAttribute('height'));
  return (w > 0 && w <= 40) || (h > 0 && h <= 40);
};

/**
 * The card's picture: the first image before its title (`before`) that the page shows or fills in. An http(s) URL
 * is preferred, from the image itself or from the page's deferred-URL list; an inline `data:` picture is used
 * only when the page holds nothing else for that image.
 */
export const thumbnailOf = (
  box: HTMLElement,
  images: (id: string) => string | undefined,
  before?: HTMLElement,
): string | undefined => {
  for (const img of qsa(box, 'img')) {
    if (before && img.order > before.order) break;
    if (isIcon(img)) continue;
    const src = img.getAttribute('src');
    for (const url of [src, img.getAttribute('data-src')]) if (url && /^https?:\/\//.test(url)) return url;
    const set = img.id ? images(img.id) : undefined;
    if (set) return set;
    if (isPicture(src)) return src;
  }
  return undefined;
};

/** A rating as shown ("4.5", "4,5", "Rated 4.5 out of 5"): its first decimal number. */
export const ratingOf = (text: string | undefined): number | undefined => {
  const m = text ? /\d+(?:[.,]\d+)?/.exec(text) : null;
  const n = m ? Number(m[0].replace(',', '.')) : Number.NaN;
  return Number.isFinite(n) && n <= 5 ? n : undefined;
};

/**
 * A count as shown ("(110)", "(1.3K)", "(2,3K)", "(5k+)"): K and M multiply; without them `.` and `,` only group
 * digits. A count written with words of the interface language ("2,3 mil") is not guessed at.
 */
export const countOf = (text: string | undefined): number | undefined => {
  const m = text ? /^\(?(\d[\d.,]*)\s*([kKmM])?\+?\)?$/.exec(text.trim()) : null;
  if (!m?.[1]) return undefined;
  const n = m[2] ? Number(m[1].replace(',', '.')) * (/k/i.test(m[2]) ? 1e3 : 1e6) : Number(m[1].replace(/[.,]/g, ''));
  return Number.isFinite(n) ? Math.round(n) : undefined;
};

/** A price as shown ("$1,034.98", "1.034,98 €"): the last `.` or `,` followed by one or two digits is decimal. */
export const priceOf = (text: string | undefined): number | undefined => {
  const m = text ? /\d[\d.,\s]*/.exec(text) : null;
  if (!m) return undefined;
  const digits = m[0].replace(/\s/g, '');
  const dec = /[.,](\d{1,2})$/.exec(digits);
  const whole = (dec ? digits.slice(0, dec.index) : digits).replace(/[.,]/g, '');
  const n = Number(dec ? `${whole}.${dec[1]}` : whole);
  return Number.isFinite(n) ? n : undefined;
};
