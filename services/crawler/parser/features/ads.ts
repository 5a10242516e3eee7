import { textOf, unwrapLink } from '../dom.js';
import type { HTMLElement } from '../html.js';
import { qs, qsa } from '../select.js';

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
 * one ad is `[data-text-ad]` (2022–26) or `.uEierd` (older). The advertiser's URL is in `data-pcu` when
 * present; `href` is Google's click-tracking link. The basic (no-JS) page marks each ad block with `.uEierd` too.
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
      if (ad) out.push(ad);
    }
  }
  if (!out.length) {
    // Basic layout: no ad ids; ad cards are `.uEierd` inside `#main`.
    for (const unit of qsa(root, '#main .uEierd')) {
      const ad = adOf(unit, 'top', out.length + 1);
      if (ad) out.push(ad);
    }
  }
  return out.length ? out : undefined;
};

const adOf = (unit: HTMLElement, where: 'top' | 'bottom', position: number): Ad | undefined => {
  const heading = qs(unit, '[role="heading"]') ?? qs(unit, 'h3') ?? qs(unit, '.CCgQ5');
  const title = textOf(heading);
  if (!title) return undefined;
  const a = qs(unit, 'a[data-pcu]') ?? qs(unit, 'a[href]');
  const pcu = a?.getAttribute('data-pcu')?.split(',')[0];
  const href = a?.getAttribute('href');
  const ad: Ad = { position, block_position: where, title };
  const link = pcu ?? unwrapLink(href);
  if (link) ad.link = link;
  if (href && pcu) ad.tracking_link = unwrapLink(href) ?? href;
  const displayed = textOf(qs(unit, '.x2VHCd') ?? qs(unit, '.qzEoUe') ?? qs(unit, 'cite'));
  if (displayed) ad.displayed_link = displayed;
  const description = textOf(qs(unit, '.MUxGbd.yDYNvb') ?? qs(unit, '.Va3FIb') ?? qs(unit, '.yDYNvb'));
  if (description) ad.description = description;
  return ad;
};
