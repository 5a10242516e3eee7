import { type HTMLElement, parseDocument } from './html.js';

/** The document tree of a page (script, style and SVG bodies and comments left out), with its selector index. */
export const loadDom = (html: string): HTMLElement => parseDocument(html).root;

/** Visible text with whitespace collapsed; `textContent` already decodes entities. */
export const textOf = (el: HTMLElement | null | undefined): string =>
  el ? el.textContent.replace(/\s+/g, ' ').trim() : '';

/**
 * Text where block children are separated by a space, so `<div>a</div><div>b</div>` does not read "ab". Hidden
 * elements, and descendants for which `leaveOut` says so, add nothing.
 */
export const spacedText = (el: HTMLElement | null | undefined, leaveOut?: (e: HTMLElement) => boolean): string => {
  if (!el) return '';
  const out: string[] = [];
  const walk = (n: HTMLElement) => {
    for (const c of n.childNodes) {
      if (c.nodeType === 3) out.push(c.text);
      else if (c.nodeType === 1) {
        const ce = c as HTMLElement;
        if (ce.getAttribute('aria-hidden') === 'true' || ce.rawTagName === 'style' || ce.rawTagName === 'script')
          continue;
        if (leaveOut?.(ce)) continue;
        const block = BLOCK.has(ce.rawTagName?.toLowerCase() ?? '');
        if (block) out.push(' ');
        walk(ce);
        if (block) out.push(' ');
      }
    }
  };
  walk(el);
  return out.join('').replace(/\s+/g, ' ').trim();
};

const BLOCK = new Set(['div', 'p', 'li', 'ul', 'ol', 'br', 'tr', 'td', 'table', 'h1', 'h2', 'h3', 'h4', 'section']);

/** True when `el` sits inside any element matching one of the predicates (walking up to the root). */
export const hasAncestor = (el: HTMLElement, test: (a: HTMLElement) => boolean): boolean => {
  for (let p = el.parentNode; p && p.rawTagName !== null && p.nodeType === 1; p = p.parentNode) {
    if (test(p)) return true;
  }
  return false;
};

export const closestWhere = (el: HTMLElement, test: (a: HTMLElement) => boolean): HTMLElement | undefined => {
  for (let p: HTMLElement | null = el; p && p.nodeType === 1; p = p.parentNode) {
    if (test(p)) return p;
  }
  return undefined;
};

export const hasClass = (el: HTMLElement, cls: string): boolean => el.classes.includes(cls);

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
