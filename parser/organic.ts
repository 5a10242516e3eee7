import type { OrganicResult } from '../contracts/result.js';
import { closestWhere, type HTMLElement, hasClass, qs, qsa, spacedText, textOf } from './dom/index.js';
import { isGoogleInternal, unwrapLink } from './links.js';
import { basicLines, isFactLine, isLinkLine, keyMomentsOf, richSnippetOf, sitelinksOf } from './organicExtras.js';
import { recordSource } from './sources.js';

/**
 * Blocks whose links are never organic results: ads (#tads/#tadsb/#bottomads, top and bottom), the right-hand
 * column (#rhs), People also ask, carousels (top stories, videos, images, products) and featured snippets.
 * Ids and custom tag names lasted 2020–2026; classes are only used where nothing else marks the block.
 */
const EXCLUDED_IDS = new Set(['tads', 'tadsb', 'bottomads', 'tvcap', 'atvcap', 'rhs', 'rhscol', 'taw']);
const EXCLUDED_TAGS = new Set([
  'g-scrolling-carousel',
  'g-inner-card',
  'block-component',
  'g-accordion-expander',
  'g-section-with-header',
]);
const EXCLUDED_CLASSES = ['related-question-pair', 'usJj9c', 'cUnQKe', 'commercial-unit-desktop-top', 'uEierd'];

const isExcludedBlock = (el: HTMLElement): boolean => {
  const id = el.id;
  if (id && EXCLUDED_IDS.has(id)) return true;
  const tag = el.rawTagName?.toLowerCase();
  if (tag && EXCLUDED_TAGS.has(tag)) return true;
  if (el.getAttribute('data-text-ad') !== undefined) return true;
  return EXCLUDED_CLASSES.some((c) => hasClass(el, c));
};

/** Walks up once per title and reports whether any ancestor is a non-organic block. */
const insideExcluded = (el: HTMLElement): boolean => {
  for (let p = el.parentNode; p && p.nodeType === 1 && p.rawTagName; p = p.parentNode) {
    if (isExcludedBlock(p)) return true;
  }
  return false;
};

/** The element that holds one result: the result controller (2022–26), `div.g` (≤2025), or the basic-page card. */
const isResultBox = (el: HTMLElement): boolean =>
  el.getAttribute('jscontroller') === 'SC7lYd' ||
  hasClass(el, 'g') ||
  hasClass(el, 'MjjYud') ||
  hasClass(el, 'Gx5Zad') ||
  hasClass(el, 'xpd') ||
  el.getAttribute('data-rpos') !== undefined;

/**
 * A title anchor: `<a href><h3>` on desktop and basic pages, `<a><div role=heading>` on the 2020–23 mobile page
 * (minus app-install cards, `a[data-app]`, and the items of headed blocks).
 */
export const titleAnchors = (root: HTMLElement): Array<{ a: HTMLElement; title: HTMLElement }> => {
  const out: Array<{ a: HTMLElement; title: HTMLElement }> = [];
  const scope = qs(root, '#rso') ?? qs(root, '#search') ?? qs(root, '#main') ?? root;
  for (const h of qsa(scope, 'h3')) {
    const a = closestWhere(h, (e) => e.rawTagName === 'a' || e.rawTagName === 'A');
    if (a?.getAttribute('href')) out.push({ a, title: h });
  }
  // On the 2021 mobile page the only `h3` may be a "More results" link back into Google: that is no title layout.
  const external = (a: HTMLElement) => {
    const link = unwrapLink(a.getAttribute('href'));
    return link !== undefined && /^https?:/i.test(link) && !isGoogleInternal(link);
  };
  if (!out.some(({ a }) => external(a))) {
    out.length = 0;
    const sections = sectionBoxes(scope);
    for (const a of qsa(scope, 'a[href]')) {
      const heading = qs(a, '[role="heading"]');
      if (!heading || a.getAttribute('data-app') !== undefined) continue;
      const box = closestWhere(a, isMobileBox);
      if (box && sections.has(box)) continue;
      out.push({ a, title: heading });
    }
  }
  return out;
};

const isMobileBox = (el: HTMLElement): boolean =>
  hasClass(el, 'xpd') || hasClass(el, 'mnr-c') || hasClass(el, 'MjjYud');

/**
 * On the 2020–23 mobile page a carousel or list block (Videos, Top stories, Recipes, Discussions and forums, a
 * local pack) is a result-sized box with its own `role=heading aria-level=2` header; an organic result has only its
 * title (`aria-level=3`) inside the anchor. Titled cards inside such boxes are the block's items, never organic.
 */
const sectionBoxes = (scope: HTMLElement): Set<HTMLElement> => {
  const boxes = new Set<HTMLElement>();
  for (const h of qsa(scope, '[role="heading"][aria-level="2"]')) {
    if (closestWhere(h, (e) => e.rawTagName === 'a')) continue;
    const box = closestWhere(h, isMobileBox);
    if (box) boxes.add(box);
  }
  return boxes;
};

export const parseOrganic = (root: HTMLElement): OrganicResult[] => {
  const results: OrganicResult[] = [];
  const seen = new Set<string>();
  for (const { a, title } of titleAnchors(root)) {
    const link = unwrapLink(a.getAttribute('href'));
    if (!link || !/^https?:/i.test(link) || isGoogleInternal(link) || seen.has(link)) continue;
    if (insideExcluded(a)) continue;
    const titleText = textOf(title);
    if (!titleText) continue;
    seen.add(link);
    results.push(buildResult(a, titleText, link, results.length + 1));
  }
  return results;
};

const buildResult = (a: HTMLElement, title: string, link: string, position: number): OrganicResult => {
  const box = closestWhere(a, isResultBox) ?? a.parentNode ?? a;
  const r: OrganicResult = { position, title, link };
  const cite = qs(box, 'cite');
  const displayed = cite ? textOf(cite) : headerDisplayedLink(a);
  if (displayed) r.displayed_link = displayed;
  const source = textOf(qs(box, '.VuuXrf'));
  if (source) r.source = source;
  const favicon = qs(box, '.XNo5Ab')?.getAttribute('src') ?? qs(box, '.H9lube img')?.getAttribute('src');
  if (favicon) r.favicon = favicon;
  const found = snippetOf(box);
  if (found?.snippet) r.snippet = found.snippet;
  if (found?.date) r.date = found.date;
  if (found?.words.length) r.snippet_highlighted_words = found.words;
  const sitelinks = sitelinksOf(box, link);
  if (sitelinks) r.sitelinks = sitelinks;
  const rich = richSnippetOf(box, found?.el);
  if (rich) r.rich_snippet = rich;
  const moments = keyMomentsOf(box, link);
  if (moments) r.key_moments = moments;
  return recordSource(r, box);
};

/**
 * Where a page has no `<cite>`, the displayed URL is in the title anchor: `.UPmit`/`.sCuL3` on the basic (no-JS)
 * page, `.yKd8Hd` on the 2023 mobile page, `.gBIQub` (site name or host, then the breadcrumb) on the 2020 mobile one.
 */
const headerDisplayedLink = (a: HTMLElement): string | undefined => {
  const t = textOf(qs(a, '.UPmit') ?? qs(a, '.sCuL3') ?? qs(a, '.yKd8Hd') ?? qs(a, '.gBIQub'));
  return t || undefined;
};

/** A line of the basic (no-JS) page: the snippet, the rating and the sitelinks each get one. */
const BASIC_LINE = 'div.BNeawe.s3v9rd.AP7Wnd';

/**
 * Snippet markers, newest first: `.VwiC3b` (2021–26), `.ITZIwc` (the description under a video result, 2024–26),
 * `data-sncf` (2023–26), then the 2020 and basic-page ones.
 */
const SNIPPET_SELECTORS = [
  '.VwiC3b',
  '.ITZIwc',
  '[data-sncf="1"]',
  '.IsZvec',
  'span.st',
  '.yDYNvb',
  BASIC_LINE,
  '[data-content-feature="1"]',
];

interface Snippet {
  snippet: string;
  date?: string;
  words: string[];
  /** The element the snippet was read from (its first line on the basic page): rich lines above it are `top`. */
  el: HTMLElement;
}

const snippetOf = (box: HTMLElement): Snippet | undefined => {
  for (const sel of SNIPPET_SELECTORS) {
    if (sel === BASIC_LINE) {
      const basic = basicSnippet(box);
      if (basic) return basic;
      continue;
    }
    const el = qs(box, sel);
    if (!el) continue;
    const { snippet, date } = splitDate(el);
    if (snippet || date) return { snippet, ...(date ? { date } : {}), words: highlighted([el]), el };
  }
  return undefined;
};

const highlighted = (els: HTMLElement[]): string[] => [
  ...new Set(
    els
      .flatMap((el) => qsa(el, 'em, b'))
      .map((e) => textOf(e))
      .filter(Boolean),
  ),
];

/** The "Read more" link Google ends 2025–26 snippets with (a text-fragment link into the page) is no snippet text. */
const isReadMore = (e: HTMLElement): boolean =>
  e.localName === 'a' && (hasClass(e, 'vzmbzf') || (e.getAttribute('href') ?? '').includes('#:~:text='));

/**
 * Google prefixes dated snippets with "Mar 3, 2024 — " (`span.LEwnzc`/`.YrbPuc`, 2020 mobile `.MUxGbd.wuQ4Ob.WZ8Tjf`,
 * basic page `span.r0bn4c` and " · "). A scholarly result puts its byline there ("by Y Conwell · 2022 — ",
 * "M Kuhlmann 著 · 2006 · 被引用数: 193 — "): the date is the part that holds a year, and the byline and citation
 * count are no snippet text either.
 */
const splitDate = (el: HTMLElement, leaveOut = isReadMore): { snippet: string; date?: string } => {
  const text = spacedText(el, leaveOut);
  const dateEl = qs(el, '.LEwnzc') ?? qs(el, '.YrbPuc') ?? qs(el, '.r0bn4c') ?? qs(el, '.MUxGbd.wuQ4Ob.WZ8Tjf');
  const prefix = spacedText(dateEl);
  if (!dateEl || !prefix || !text.startsWith(prefix)) return { snippet: text };
  const rest = text.slice(prefix.length);
  // What follows the date must be its separator (a lone mark: "—", "·"; one 2021 page has a mis-decoded "�"), or the
  // end of the prefix itself held it ("Mar 3, 2024 —"), or nothing follows (a result whose snippet is its date).
  const mark = /^\s*[^\p{L}\p{N}\s]\s/u;
  if (rest && !mark.test(rest) && !/[—–·-]\s*$/.test(prefix)) return { snippet: text };
  const parts = textOf(dateEl)
    .replace(/\s*[—–·-]\s*$/, '')
    .split(/\s+·\s+/);
  const date = parts.length === 1 ? parts.find((p) => /\d/.test(p)) : parts.find((p) => /(?<!\d)\d{4}(?!\d)/.test(p));
  const snippet = rest.replace(mark, '').trim();
  return date ? { snippet, date } : { snippet };
};

/**
 * The basic (no-JS) page stacks its lines in `div.BNeawe.s3v9rd.AP7Wnd` blocks nested in one of the same class:
 * the innermost ones are the lines. A line of links only holds the sitelinks and a line of facts the rating or price
 * (organicExtras.ts reads both); the others are the snippet, the first one possibly led by its date.
 */
const basicSnippet = (box: HTMLElement): Snippet | undefined => {
  const lines = basicLines(box).filter((l) => !isFactLine(l) && !isLinkLine(l));
  const [first, ...more] = lines;
  if (!first) return undefined;
  const { snippet, date } = splitDate(first);
  const text = [snippet, ...more.map((l) => spacedText(l))].join(' ').trim();
  return { snippet: text, ...(date ? { date } : {}), words: highlighted(lines), el: first };
};
