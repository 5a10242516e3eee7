import { closest, type HTMLElement, hasAncestor, qs, qsa, textOf } from '../dom/index.js';
import { googleSearchLink } from '../links.js';

/**
 * Related searches. `a.k8XOCe` lasted until early 2025; after that the only stable description is BlankTrail's:
 * links to `/search` inside `#botstuff`/`#bres`, outside pagination, that are not another page, tab or filter of
 * the same search. The phrase is the `q` parameter, which is language-independent.
 */
export const relatedSearches = (root: HTMLElement): Array<Record<string, string>> | undefined => {
  const scope = qs(root, '#botstuff') ?? qs(root, '#bres') ?? qs(root, '#brs');
  // Basic (no-JS) pages, 2020–24: every suggestion link carries an `accordion-entry-search-icon` element, whatever
  // the block's localized heading ("Related searches", "Andra söker även efter", "Похожие запросы").
  const basic = qsa(root, 'accordion-entry-search-icon').flatMap((icon) => closest(icon, 'a') ?? []);
  const anchors = [
    ...qsa(root, 'a.k8XOCe'),
    ...(scope ? qsa(scope, 'a[href]') : []),
    ...qsa(root, 'a.ngTNl'),
    // 2021 mobile page.
    ...qsa(root, 'a.F3dFTe'),
    ...basic,
  ];
  const out: Array<Record<string, string>> = [];
  const seen = new Set<string>();
  for (const a of anchors) {
    const search = googleSearchLink(a);
    if (!search) continue;
    const { link, params } = search;
    if (['start', 'tbm', 'udm', 'tbs', 'ibp'].some((p) => params.has(p))) continue;
    if (hasAncestor(a, (e) => e.getAttribute('role') === 'navigation' || e.id === 'foot')) continue;
    const query = params.get('q');
    if (!query || seen.has(query)) continue;
    seen.add(query);
    out.push({ query: textOf(a) || query, link });
  }
  return out.length ? out : undefined;
};

/** Google writes `/search?…`; a page saved by a browser extension (SingleFile) already has absolute links. */
const absolute = (href: string): string => (href.startsWith('/') ? `https://www.google.com${href}` : href);

/** Pagination from `[role=navigation]` (`a#pnnext` is the next page); `start` carries the offset. */
export const pagination = (root: HTMLElement): Record<string, unknown> | undefined => {
  const nav = qs(root, '[role="navigation"] table') ?? qs(root, '#botstuff [role="navigation"]');
  if (!nav) return undefined;
  const other: Record<string, string> = {};
  for (const a of qsa(nav, 'a[href]')) {
    const n = textOf(a);
    const href = a.getAttribute('href') ?? '';
    if (/^\d+$/.test(n) && href.includes('start=')) other[n] = absolute(href);
  }
  const current = Number(textOf(qs(nav, '.YyVfkd')) || '1');
  const next = qs(nav, '#pnnext')?.getAttribute('href') ?? qs(root, 'a#pnnext')?.getAttribute('href');
  if (!next && !Object.keys(other).length) return undefined;
  return {
    current: Number.isFinite(current) ? current : 1,
    ...(next ? { next: absolute(next) } : {}),
    ...(Object.keys(other).length ? { other_pages: other } : {}),
  };
};
