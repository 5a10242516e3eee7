import { type HTMLElement, qs, qsa, textOf } from '../dom/index.js';
import { unwrapLink } from '../links.js';
import { recordSource } from '../sources.js';

interface Ad {
  position: number;
  block_position: 'top' | 'bottom';
  title: string;
  link?: string;
  tracking_link?: string;
  displayed_link?: string;
  description?: string;
}

/**
 * Text ads live in `#tads` (top) and `#tadsb`/`#bottomads` (bottom) on every desktop and mobile page 2020–2026;
 * one ad is `[data-text-ad]` (2022–26) or `.uEierd` (older). The basic (no-JS) page marks each ad block with
 * `.uEierd` too.
 */
export const ads = (root: HTMLElement): Ad[] | undefined => {
  const out: Ad[] = [];
  const blocks: Array<[HTMLElement | null, 'top' | 'bottom']> = [
    [qs(root, '#tads'), 'top'],
    [qs(root, '#tadsb'), 'bottom'],
    [qs(root, '#bottomads'), 'bottom'],
  ];
  const done = new Set<HTMLElement>();
  for (const [block, where] of blocks) {
    if (!block) continue;
    let units = qsa(block, '[data-text-ad]');
    if (!units.length) units = qsa(block, '.uEierd');
    for (const unit of units) {
      if (done.has(unit)) continue;
      done.add(unit);
      const ad = adOf(unit, where, out.length + 1);
      if (ad) out.push(recordSource(ad, unit));
    }
  }
  if (!out.length) {
    // Basic layout: no ad ids; ad cards are `.uEierd` inside `#main`.
    for (const unit of qsa(root, '#main .uEierd')) {
      const ad = adOf(unit, 'top', out.length + 1);
      if (ad) out.push(recordSource(ad, unit));
    }
  }
  return out.length ? out : undefined;
};

const adOf = (unit: HTMLElement, where: 'top' | 'bottom', position: number): Ad | undefined => {
  const heading = qs(unit, '[role="heading"]') ?? qs(unit, 'h3') ?? qs(unit, '.CCgQ5');
  const title = textOf(heading);
  if (!title) return undefined;
  const a = qs(unit, 'a[data-pcu]') ?? qs(unit, 'a[href]');
  const ad: Ad = { position, block_position: where, title };
  // Mobile ads (2022–23) write the display URL in a `role=text` span beside the advertiser's name.
  const displayed = textOf(
    qs(unit, '.x2VHCd') ?? qs(unit, '.qzEoUe') ?? qs(unit, 'cite') ?? qs(unit, 'span[role="text"]'),
  );
  const { link, tracking } = adLinks(a, displayed);
  if (link) ad.link = link;
  if (tracking) ad.tracking_link = tracking;
  if (displayed) ad.displayed_link = displayed;
  const description = textOf(qs(unit, '.MUxGbd.yDYNvb') ?? qs(unit, '.Va3FIb') ?? qs(unit, '.yDYNvb'));
  if (description) ad.description = description;
  return ad;
};

const isClickTracker = (url: string): boolean =>
  /^(?:https?:\/\/(?:www\.)?(?:google\.[a-z.]+|googleadservices\.com))?\/(?:aclk|pagead\/aclk)\?/i.test(url);

/**
 * An ad's landing page and Google's click-tracking link. The anchor's `href` is the landing page on JS pages
 * (2020–26) and Google's `/aclk?…` on basic pages and some 2023 ones; the tracking link is then `href`, otherwise
 * `data-rw`. `data-pcu` lists the hosts the click passes through (the advertiser's and a redirector's such as
 * clickserve.dartsearch.net, in either order): it is only used when `href` is the tracker, and then the entry on the
 * displayed link's host (or the `adurl` the tracker names) is the landing page.
 */
const adLinks = (a: HTMLElement | null, displayed: string): { link?: string; tracking?: string } => {
  const href = a?.getAttribute('href');
  const rw = a?.getAttribute('data-rw');
  if (!href) return {};
  const absolute = unwrapLink(href) ?? href;
  if (!isClickTracker(href)) return { link: absolute, ...(rw ? { tracking: rw } : {}) };
  const adurl = new URLSearchParams(absolute.split('?')[1] ?? '').get('adurl');
  if (adurl && /^https?:/.test(adurl)) return { link: adurl, tracking: absolute };
  const hops = (a?.getAttribute('data-pcu') ?? '').split(',').filter((u) => /^https?:/.test(u));
  const host = /^(?:https?:\/\/)?([^/\s›]+)/.exec(displayed)?.[1]?.replace(/^www\./, '');
  const onHost = host ? hops.find((u) => new URL(u).hostname.replace(/^www\./, '') === host) : undefined;
  const link = onHost ?? hops[0];
  return { ...(link ? { link } : {}), tracking: absolute };
};
