import type { DomainRank } from '../../contracts/events.js';
import type { RankFeature } from '../../contracts/monitors.js';
import type { ParsedSerp } from '../../contracts/result.js';

/**
 * Which results a tracked domain owns (docs/rank-tracking.md): `example.com` matches that host and `www.example.com`;
 * `*.example.com` also every subdomain; `example.com/blog/` the URLs of those hosts under that path.
 */
export const domainMatcher = (pattern: string) => {
  const wildcard = pattern.startsWith('*.');
  const rest = wildcard ? pattern.slice(2) : pattern;
  const slash = rest.indexOf('/');
  const host = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? '' : rest.slice(slash);
  return (url: string): boolean => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return false;
    }
    const h = u.hostname.toLowerCase();
    const hostOk = h === host || h === `www.${host}` || (wildcard && h.endsWith(`.${host}`));
    return hostOk && (path === '' || u.pathname.toLowerCase().startsWith(path));
  };
};

/** Every http(s) URL inside a feature's value (its links, sources, websites), a few levels deep. */
const urlsIn = (value: unknown, out: string[] = [], depth = 0): string[] => {
  if (depth > 4 || value === null || value === undefined) return out;
  if (typeof value === 'string') {
    if (/^https?:\/\//.test(value)) out.push(value);
  } else if (Array.isArray(value)) {
    for (const v of value) urlsIn(v, out, depth + 1);
  } else if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) if (k !== 'thumbnail' && k !== 'image') urlsIn(v, out, depth + 1);
  }
  return out;
};

/** The SERP features that can cite a domain, by where the parser puts them. */
const FEATURE_SOURCES: Array<[RankFeature, (r: ParsedSerp) => unknown]> = [
  ['ai_overview_citation', (r) => r.ai_overview?.references],
  ['featured_snippet', (r) => r.serp_features.answer_box],
  ['people_also_ask', (r) => r.serp_features.related_questions],
  ['local_pack', (r) => r.serp_features.local_results],
  ['top_stories', (r) => r.serp_features.top_stories],
];

/** what a result laid out by the renderer carries (docs/screenshots.md#pixel-positions) */
interface Placed {
  pixels_from_top?: number | null;
  above_the_fold?: boolean;
}

/**
 * Each tracked domain in one search: its best organic position within the first `depth` results (absent: not
 * ranked), the URL there, and the features that cite it. Pure: the same result gives the same ranks.
 *
 * `placed`: the result carries the first page's pixel positions (a monitor with `pixel_positions`,
 * docs/rank-tracking.md): each domain also gets how far down its best result lay and whether it was on the first
 * screen; a domain not ranked, or ranked on a later page (never laid out), is `null` and not above the fold.
 */
export const rankDomains = (
  result: ParsedSerp,
  domains: readonly string[],
  depth: number,
  placed = false,
): DomainRank[] => {
  const organic = result.organic_results.filter((o) => o.position <= depth && typeof o.link === 'string');
  const featureUrls = FEATURE_SOURCES.map(([name, pick]) => [name, urlsIn(pick(result))] as const);
  return domains.map((domain) => {
    const owns = domainMatcher(domain);
    let best: (typeof organic)[number] | undefined;
    for (const o of organic) if (owns(o.link as string) && (!best || o.position < best.position)) best = o;
    const features: string[] = [];
    for (const [name, urls] of featureUrls) if (urls.some(owns)) features.push(name);
    if (best?.sitelinks) features.push('sitelinks');
    const at = best as Placed | undefined;
    const pixels = placed
      ? { pixelsFromTop: at?.pixels_from_top ?? null, aboveTheFold: at?.above_the_fold === true }
      : {};
    return best
      ? { domain, position: best.position, url: best.link as string, features, ...pixels }
      : { domain, features, ...pixels };
  });
};
