import { type HTMLDocument, type HTMLElement, qsa, textOf } from '../dom/index.js';
import { isGoogleInternal, unwrapLink } from '../links.js';

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
      // Most text nodes between elements are whitespace; entities are decoded only where there are any.
      const raw = c.rawText;
      if (!/\S/.test(raw)) continue;
      const decoded = raw.includes('&') ? c.text : raw;
      const text = /\s\s|[^\S ]/.test(decoded) ? decoded.replace(/\s+/g, ' ').trim() : decoded.trim();
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
    const spoken = attr(e, 'aria-label');
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
 * An attribute's value, looked up only when the element's attribute text holds the name as written: Google writes
 * names in lower case, and a lookup of an absent name would lower-case the whole attribute text (an image's can
 * be a 15 kB inline picture) to be sure.
 */
export const attr = (el: HTMLElement, name: string): string | undefined =>
  el.rawAttrs.includes(name) ? el.getAttribute(name) : undefined;

/**
 * The first descendant of `el` carrying attribute `name`, found by walking the subtree: a card is a few dozen
 * elements, while a selector on an attribute the page index does not cover would search the whole page text.
 */
export const descendantWith = (el: HTMLElement, name: string): HTMLElement | undefined => {
  for (const c of el.childNodes) {
    if (c.nodeType !== 1) continue;
    const e = c as HTMLElement;
    if (attr(e, name) !== undefined) return e;
    const inner = descendantWith(e, name);
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
 * tree. The scripts are found by the start of each body the tree skipped (a search of the whole page text would
 * cost a millisecond), once per page and only when a card asks; each picture is then looked up by its id in them
 * rather than all of them being read.
 */
export const pageImages = (root: HTMLElement): ((id: string) => string | undefined) => {
  let scripts: ImageScripts | undefined;
  return (id) => {
    const doc = root.doc;
    if (!doc) return undefined;
    scripts ??= imageScripts(doc);
    return lookUp(doc.source, scripts, id);
  };
};

interface ImageScripts {
  /** The `{…}` of google.ldi, as start and end offsets. */
  ldi?: [number, number];
  /** Per inline picture: where its data starts, where its id list starts and ends. */
  inline: Array<[number, number, number]>;
}

const SET_IMAGES = "(function(){var s='";
const IDS = "';var ii=[";
const LDI_SCRIPT = '(function(){google.';

const imageScripts = (doc: HTMLDocument): ImageScripts => {
  const src = doc.source;
  const found: ImageScripts = { inline: [] };
  for (let i = 0; i < doc.skipped.length; i += 2) {
    const start = doc.skipped[i] as number;
    const end = doc.skipped[i + 1] as number;
    // Both kinds start "(function(){"; a character test first spares a `startsWith` on every other body.
    if (src.charCodeAt(start) !== 40) continue;
    if (src.startsWith(SET_IMAGES, start)) {
      const ids = src.lastIndexOf(IDS, end);
      const close = ids > start ? src.indexOf(']', ids) : -1;
      if (close > 0 && close < end) found.inline.push([start + SET_IMAGES.length, ids, close]);
      continue;
    }
    // Desktop pages start a script with it; mobile pages set it deep inside a longer script, and looking there
    // would mean searching every script.
    if (found.ldi || !src.startsWith(LDI_SCRIPT, start)) continue;
    const at = src.slice(start, Math.min(end, start + 80)).indexOf('google.ldi={');
    if (at < 0) continue;
    const open = start + at + 'google.ldi='.length;
    const close = src.slice(open, end).indexOf('}');
    if (close > 0) found.ldi = [open, open + close + 1];
  }
  return found;
};

/** A URL the page will load wins over the inline copy of the same picture. */
const lookUp = (src: string, scripts: ImageScripts, id: string): string | undefined => {
  if (scripts.ldi) {
    const ldi = src.slice(scripts.ldi[0], scripts.ldi[1]);
    const key = `"${id}":"`;
    const at = ldi.indexOf(key);
    if (at >= 0) {
      const close = ldi.indexOf('"', at + key.length);
      try {
        const url = JSON.parse(ldi.slice(at + key.length - 1, close + 1)) as string;
        if (/^https?:\/\//.test(url)) return url;
      } catch {
        // Not a JSON string: no URL from here.
      }
    }
  }
  const quoted = `'${id}'`;
  for (const [data, ids, close] of scripts.inline) {
    if (!src.slice(ids, close).includes(quoted)) continue;
    // The script escapes `=` and `/` (`\x3d`, `\/`): one pass undoes both.
    const picture = src.slice(data, ids).replace(/\\x3d|\\\//g, (m) => (m === '\\/' ? '/' : '='));
    return isPicture(picture) ? picture : undefined;
  }
  return undefined;
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
    const inline = inlinePicture(img);
    if (inline) return inline;
    // `src` first: reading it parses the attributes once, and the size test after it is a map lookup.
    const src = img.getAttribute('src');
    if (isIcon(img)) continue;
    for (const url of [src, img.getAttribute('data-src')]) if (url && /^https?:\/\//.test(url)) return url;
    // An image the page already holds inline has no URL anywhere on the page (none of the 1,199 on the fixture
    // pages has one in google.ldi), so the scripts are read only for placeholders.
    if (isPicture(src)) return src;
    const set = img.id ? images(img.id) : undefined;
    if (set) return set;
  }
  return undefined;
};

/**
 * The inline picture of an image whose attribute text runs to kilobytes (a thumbnail, never an icon), cut straight
 * out of that text: parsing and decoding every attribute would read the picture twice more. A value holding an
 * entity, or a lazy URL beside it, goes the ordinary way.
 */
const inlinePicture = (img: HTMLElement): string | undefined => {
  const raw = img.rawAttrs;
  if (raw.length < 2000) return undefined;
  const at = raw.startsWith('src="') ? 0 : raw.indexOf(' src="') + 1;
  if (at <= 0 && !raw.startsWith('src="')) return undefined;
  const from = at + 'src="'.length;
  const to = raw.indexOf('"', from);
  const value = to > from ? raw.slice(from, to) : '';
  if (!value.startsWith('data:image/') || value.includes('&') || raw.includes('data-src=')) return undefined;
  return isPicture(value) ? value : undefined;
};

/** A rating as shown ("4.5", "4,5", "Rated 4.5 out of 5"): its first decimal number. */
export const ratingOf = (text: string | undefined): number | undefined => {
  const m = text ? /\d+(?:[.,]\d+)?/.exec(text) : null;
  const n = m ? Number(m[0].replace(',', '.')) : Number.NaN;
  return Number.isFinite(n) && n <= 5 ? n : undefined;
};

/**
 * A count as shown ("(110)", "(1.3K)", "(2,3K)", "(5k+)", "1 802"): K and M multiply; without them `.`, `,` and
 * (narrow) spaces only group digits. A count written with words of the interface language ("2,3 mil") is not
 * guessed at.
 */
export const countOf = (text: string | undefined): number | undefined => {
  const m = text ? /^\(?(\d[\d.,\s\u00a0\u202f]*?)\s*([kKmM])?\+?\)?$/.exec(text.trim()) : null;
  if (!m?.[1]) return undefined;
  const n = m[2] ? Number(m[1].replace(',', '.')) * (/k/i.test(m[2]) ? 1e3 : 1e6) : Number(m[1].replace(/\D/g, ''));
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
