import { type HTMLElement, hasAncestor, hasClass, qs, qsa, textOf } from '../dom/index.js';
import { queryDisplayed } from '../information.js';
import { googleSearchLink } from '../links.js';

/**
 * The filter chips under the search box ("In law", "Today", "Remote"; 2023–26, desktop and mobile): SerpApi's
 * `filters[]`, each a refinement of the search that Google names by a `uds` token, which SerpApi's `uds` parameter
 * takes back. Each is `{name, link, uds, q}`: the chip's label, the search it opens, the token and that search's
 * query. Known by what lasted: a link to `/search` carrying `uds` and a query other than the page's own, in the
 * navigation above the results. The tabs among the chips (Images, News, Perspectives, Places) keep the query and
 * switch the kind of search: they are not filters, even where they carry `uds`. Links with `uds` among the results
 * ("People also search for" boxes) are not chips. SerpApi's `serpapi_link` is a link of the service, not of the
 * page, and is not made here.
 */
export const filters = (root: HTMLElement): Array<Record<string, string>> | undefined => {
  const anchors = linksAbove(root);
  if (!anchors.length) return undefined;
  const query = normal(queryDisplayed(root) ?? '');
  const out: Array<Record<string, string>> = [];
  const seen = new Set<string>();
  for (const a of anchors) {
    const search = googleSearchLink(a);
    if (!search) continue;
    const { link, params } = search;
    const uds = params.get('uds');
    const q = params.get('q') ?? '';
    // A filter narrows the query ("Define judgement in law"), on the Images tab as well (where it keeps `udm=2`).
    if (!uds || !q || normal(q) === query || seen.has(uds)) continue;
    const name = textOf(a);
    if (!name || !inSearchBar(a)) continue;
    seen.add(uds);
    out.push({ name, link, uds, q });
  }
  return out.length ? out : undefined;
};

/**
 * Links carrying `uds` above the results: the search bar's rows come before `#rcnt` (desktop) or `#center_col`
 * (mobile), so only the page's first few hundred elements are read rather than every link of the page. A page
 * without either landmark has all its links read.
 */
const linksAbove = (root: HTMLElement): HTMLElement[] => {
  const all = root.doc?.all;
  const results = qs(root, '#rcnt') ?? qs(root, '#center_col');
  if (!all || !results) return qsa(root, 'a[href*="uds="]');
  const out: HTMLElement[] = [];
  for (let i = 0; i < results.order; i++) {
    const el = all[i] as HTMLElement;
    if (el.localName === 'a' && el.rawAttrs.includes('uds=')) out.push(el);
  }
  return out;
};

/** Queries compared as Google treats them: case and runs of spaces make no difference. */
const normal = (q: string): string => q.toLowerCase().replace(/\s+/g, ' ').trim();

/** Inside the navigation above the results, and not in a block of the results themselves. */
const inSearchBar = (a: HTMLElement): boolean =>
  hasAncestor(a, (e) => e.getAttribute('role') === 'navigation') &&
  !hasAncestor(a, (e) => hasClass(e, 'MjjYud') || e.id === 'rso' || e.id === 'botstuff');
