import type { HTMLElement } from './dom/index.js';

/**
 * Google wraps targets in `/url?q=` (no-JS and mobile pages), `/url?url=` or `…/url?sa=t&url=` (2025–26) and
 * `/interstitial?url=`. The real target is what users want; the encrypted `/goto?url=` form cannot be resolved
 * without a request, so it is kept as Google served it.
 */
export const unwrapLink = (href: string | undefined): string | undefined => {
  if (!href) return undefined;
  const m = /^(?:https?:\/\/(?:www\.)?google\.[a-z.]+)?\/(?:url|interstitial|imgres)\?(.*)$/i.exec(href);
  const absolute = href.startsWith('/') ? `https://www.google.com${href}` : href;
  if (!m) return absolute;
  const params = new URLSearchParams(m[1]);
  const target = params.get('q') || params.get('url') || params.get('imgrefurl');
  return target && /^https?:\/\//i.test(target) ? target : absolute;
};

/**
 * Links that lead back into Google's own search UI (more results, image tab, settings): a UI path with a query
 * string, or `/search` itself. Other Google pages are kept: for the query "google" `google.com/search/about/`,
 * `…/search/howsearchworks/` and the bare `…/advanced_search` page are organic results (serp-parser-zlurad's
 * google-100 pages), as are Maps, Translate and Drive.
 */
export const isGoogleInternal = (link: string): boolean =>
  /^https?:\/\/(?:www\.)?google\.[a-z.]+\/(?:(?:search|setprefs|preferences|advanced_search|sorry|imgres|url)[?#]|search$)/i.test(
    link,
  ) ||
  link.startsWith('#') ||
  link.startsWith('javascript:');

/**
 * A link to Google's own results (`/search?…`, or absolute as in a page saved by a browser extension): its absolute
 * URL and its query's parameters; undefined for any other link.
 */
export const googleSearchLink = (a: HTMLElement): { link: string; params: URLSearchParams } | undefined => {
  const href = a.getAttribute('href') ?? '';
  if (!/^(?:https?:\/\/www\.google\.[a-z.]+)?\/search\?/.test(href)) return undefined;
  return {
    link: href.startsWith('/') ? `https://www.google.com${href}` : href,
    params: new URLSearchParams(href.slice(href.indexOf('?') + 1)),
  };
};
