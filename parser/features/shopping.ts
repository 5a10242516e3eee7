import { type HTMLElement, hasClass, qs, qsa, textOf } from '../dom/index.js';
import { isGoogleInternal, unwrapLink } from '../links.js';
import { attr, countOf, type Item, pageImages, priceOf, ratingOf, thumbnailOf } from './blockCards.js';

/**
 * Shopping (product listing) ads: `.pla-unit` in a top or right-hand carousel (2021–24), under SerpApi's
 * `shopping_results` names. Each unit carries a hover card repeating its fields; the first occurrence is read.
 */
export const shoppingResults = (root: HTMLElement): Item[] | undefined => {
  const out: Item[] = [];
  let images: ((id: string) => string | undefined) | undefined;
  for (const unit of qsa(root, '.pla-unit')) {
    if (hasClass(unit, 'pla-unit-container')) continue;
    const title = titleOf(unit);
    if (!title) continue;
    const item: Item = { position: out.length + 1, title };
    const link = linkOf(unit);
    if (link) item.link = link;
    // The price's first text: a discounted unit shows the old price in a child span after it.
    const priceEl = qs(unit, '.e10twf, .dOp6Sc');
    const price = priceEl ? firstText(priceEl) : '';
    if (price) {
      item.price = price;
      const value = priceOf(price);
      if (value !== undefined) item.extracted_price = value;
    }
    const source = textOf(qs(unit, '.zPEcBd'));
    if (source) item.source = source;
    const stars = qs(unit, '[role="img"][aria-label]');
    const rating = ratingOf(stars?.getAttribute('aria-label'));
    if (rating !== undefined) item.rating = rating;
    const reviews = stars ? countOf(textOf(qs(unit, '.pbAs0b, .GhQXkc'))) : undefined;
    if (reviews !== undefined) item.reviews = reviews;
    images ??= pageImages(root);
    const thumbnail = productImage(unit, images);
    if (thumbnail) item.thumbnail = thumbnail;
    out.push(item);
  }
  return out.length ? out : undefined;
};

const firstText = (el: HTMLElement): string => {
  for (const c of el.childNodes) {
    const t = (c.nodeType === 3 ? c.text : textOf(c as HTMLElement)).replace(/\s+/g, ' ').trim();
    if (t) return t;
  }
  return '';
};

/**
 * The product's name. 2021–24 units print it once (`.pymv4e`), except 2021 desktop units, which print a short and
 * a longer cut of it side by side, with the whole name in the hover card: the longest of these is the name.
 */
const titleOf = (unit: HTMLElement): string => {
  const name = qs(unit, '.pymv4e');
  if (name) return textOf(name);
  const heading = qs(unit, '[role="heading"]');
  const cuts = heading ? qsa(heading, 'span').filter((e) => !qs(e, 'span')) : [];
  const candidates = [...qsa(unit, '.r4awE'), ...cuts, ...(heading && !cuts.length ? [heading] : [])];
  return candidates.map(textOf).reduce((a, b) => (b.length > a.length ? b : a), '');
};

/**
 * The merchant's page when the unit links to it; a unit that only has Google's ad redirect (mobile) gives that,
 * made absolute.
 */
const linkOf = (unit: HTMLElement): string | undefined => {
  // By tag: a hover card repeats the unit's links, and an `[href]` test would decode every one of them.
  const anchors = unit.localName === 'a' ? [unit, ...qsa(unit, 'a')] : qsa(unit, 'a');
  let redirect: string | undefined;
  for (const a of anchors) {
    const link = attr(a, 'data-pcu')?.split(',')[0] || unwrapLink(attr(a, 'href'));
    if (!link || !/^https?:\/\//.test(link) || isGoogleInternal(link)) continue;
    if (/^https?:\/\/(?:www\.)?(?:google|googleadservices)\.[a-z.]+\/(?:pagead\/)?aclk\?/.test(link)) redirect ??= link;
    else return link;
  }
  return redirect;
};

/**
 * The product picture: a URL the unit loads (`src`, or `data-src` of a lazy or hover image) first; else a picture
 * filled in by script or inline, from an image whose `alt` names the product (the 48 px badge has none).
 */
const productImage = (unit: HTMLElement, images: (id: string) => string | undefined): string | undefined => {
  const all = qsa(unit, 'img');
  for (const img of all) {
    // An image whose attribute text runs to kilobytes holds an inline picture, not a URL: skipping it by length
    // spares a search through the picture (a unit has several).
    if (img.rawAttrs.length > 2000 || !img.rawAttrs.includes('http')) continue;
    for (const src of [attr(img, 'src'), attr(img, 'data-src')]) {
      if (src && /^https?:\/\//.test(src)) return src;
    }
  }
  for (const img of all) {
    if (!attr(img, 'alt')) continue;
    const found = thumbnailOf(img.parentNode ?? unit, images);
    if (found) return found;
  }
  return undefined;
};
