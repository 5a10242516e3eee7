import { closestWhere, type HTMLElement, hasClass, qs, qsa, textOf } from './dom/index.js';
import { isGoogleInternal, unwrapLink } from './links.js';
import { titleAnchors } from './organic.js';

/** One article of a news-tab page, under SerpApi's `news_results` names. */
export interface NewsResult {
  position: number;
  title: string;
  link: string;
  source?: string;
  date?: string;
  snippet?: string;
  thumbnail?: string;
}

/** The `tbm` of a Google URL (absolute or `/search?…`), or undefined when it has none or is no URL. */
export const tbmOf = (url: string | undefined): string | undefined => {
  if (!url) return undefined;
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  return new URLSearchParams(url.slice(q + 1).split('#')[0]).get('tbm') ?? undefined;
};

/** The Google links of the pagination feature (`next`, `other_pages`), whatever else it holds. */
export const pageLinks = (pagination: unknown): string[] => {
  if (!pagination || typeof pagination !== 'object') return [];
  const { next, other_pages } = pagination as { next?: unknown; other_pages?: unknown };
  const links = other_pages && typeof other_pages === 'object' ? Object.values(other_pages) : [];
  return [next, ...links].filter((l): l is string => typeof l === 'string');
};

/** Blocks inside which a news card belongs to a carousel of a web page (top stories), never to a news tab. */
const isCarousel = (el: HTMLElement): boolean => {
  const tag = el.rawTagName?.toLowerCase();
  return tag === 'g-section-with-header' || tag === 'g-scrolling-carousel' || tag === 'g-inner-card';
};

/**
 * Whether the page is a news-tab results page (`tbm=nws`). The request's `tbm` decides when the caller knows it.
 * Otherwise the page says so in markup that lasted: Google's own links to the other pages of this result list
 * (`[role=navigation]` page links, `a#pnnext`: `pageLinks`, read once by the pagination feature) carry `tbm=nws`.
 * A one-page list has none, and is told by its results: news cards (`[data-news-doc-id]`) directly in the results
 * column and no web result (`a h3`) beside them.
 */
export const isNewsTab = (root: HTMLElement, tbm: string | undefined, pageLinks: string[]): boolean => {
  if (tbm !== undefined) return tbm === 'nws';
  if (pageLinks.length) return pageLinks.some((href) => tbmOf(href) === 'nws');
  const scope = qs(root, '#rso');
  if (!scope) return false;
  const cards = qsa(scope, '[data-news-doc-id]');
  if (cards.length === 0 || qs(scope, 'a h3')) return false;
  return !cards.some((c) => closestWhere(c, isCarousel));
};

/** The element that holds one article: the news card (2022–26) or, on older layouts, the result box. */
const cardOf = (a: HTMLElement): HTMLElement =>
  closestWhere(a, (e) => e.getAttribute('data-news-doc-id') !== undefined || hasClass(e, 'SoaBEf')) ??
  closestWhere(a, (e) => hasClass(e, 'g') || hasClass(e, 'MjjYud') || hasClass(e, 'dbsr')) ??
  a;

/**
 * The articles of a news-tab page, in page order, positions 1..N. Each is a titled link out of Google (the title is
 * the card's heading); source, date, snippet and thumbnail are read where the card has them.
 */
export const parseNews = (root: HTMLElement, raw: string): NewsResult[] => {
  const out: NewsResult[] = [];
  const seen = new Set<string>();
  let images: Map<string, string> | undefined;
  for (const { a, title } of titleAnchors(root)) {
    const link = unwrapLink(a.getAttribute('href'));
    if (!link || !/^https?:/i.test(link) || isGoogleInternal(link) || seen.has(link)) continue;
    if (closestWhere(a, isCarousel)) continue;
    const titleText = textOf(title);
    if (!titleText) continue;
    seen.add(link);
    const card = cardOf(a);
    const r: NewsResult = { position: out.length + 1, title: titleText, link };
    const sourceEl = qs(card, '.MgUUmf') ?? qs(card, '.CEMjEf') ?? qs(card, '.NUnG9d') ?? qs(card, 'cite');
    const source = textOf(sourceEl);
    if (source) r.source = source;
    const date = textOf(qs(card, '.OSrXXb') ?? qs(card, '.rbYSKb') ?? qs(card, '.LfVVr') ?? qs(card, '.ZE0LJd'));
    if (date) r.date = date;
    const snippet = textOf(qs(card, '.GI74Re') ?? qs(card, '.Y3v8qd') ?? qs(card, '.VwiC3b'));
    if (snippet) r.snippet = snippet;
    images ??= scriptImages(raw);
    const thumbnail = thumbnailOf(card, sourceEl, images);
    if (thumbnail) r.thumbnail = thumbnail;
    out.push(r);
  }
  return out;
};

/** A loaded image: an http(s) URL or an inline picture, never the 1×1 placeholder a script later replaces. */
const isPicture = (src: string | undefined): src is string =>
  !!src && (/^https?:\/\//.test(src) || (/^data:image\//.test(src) && src.length > 200));

/** The card's picture: the first image outside the source line (whose 16px image is the site's icon). */
const thumbnailOf = (
  card: HTMLElement,
  sourceEl: HTMLElement | null,
  images: Map<string, string>,
): string | undefined => {
  for (const img of qsa(card, 'img')) {
    if (sourceEl && closestWhere(img, (e) => e === sourceEl)) continue;
    const src = img.getAttribute('src') ?? img.getAttribute('data-src');
    if (isPicture(src)) return src;
    const id = img.id;
    const set = id ? images.get(id) : undefined;
    if (set) return set;
  }
  return undefined;
};

const SET_IMAGES = /var s='([^']+)';var ii=\[([^\]]*)\];_setImagesSrc\(/g;

/**
 * A page as Google sends it leaves the thumbnails empty and fills them from inline scripts,
 * `var s='data:image/…';var ii=['dimg_…'];_setImagesSrc(ii,s)`, which the document tree no longer holds.
 */
const scriptImages = (raw: string): Map<string, string> => {
  const map = new Map<string, string>();
  if (!raw.includes('_setImagesSrc(')) return map;
  SET_IMAGES.lastIndex = 0;
  for (let m = SET_IMAGES.exec(raw); m; m = SET_IMAGES.exec(raw)) {
    const src = (m[1] ?? '').replace(/\\x3d/g, '=').replace(/\\\//g, '/');
    if (!isPicture(src)) continue;
    for (const id of (m[2] ?? '').split(',')) {
      const key = id.trim().replace(/^'|'$/g, '');
      if (key && !map.has(key)) map.set(key, src);
    }
  }
  return map;
};
