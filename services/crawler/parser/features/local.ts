import { textOf } from '../dom.js';
import type { HTMLElement } from '../html.js';
import { closest, qs, qsa } from '../select.js';

/**
 * Local pack: each place is a `.rllt__details` block (2020–25), next to a map. Rating and review count are the
 * first numbers in the block's rating line; the other lines (type, address, hours) are kept in page order because
 * their order, not a class, is what tells them apart.
 */
export const localResults = (root: HTMLElement): Record<string, unknown> | undefined => {
  const places: Array<Record<string, unknown>> = [];
  for (const d of qsa(root, '.rllt__details')) {
    const title = textOf(qs(d, '[role="heading"]') ?? qs(d, '.dbg0pd') ?? (d.firstChild as HTMLElement));
    if (!title) continue;
    const place: Record<string, unknown> = { position: places.length + 1, title };
    const rating = textOf(qs(d, '.yi40Hd') ?? qs(d, '.MW4etd') ?? qs(d, '.BTtC6e'));
    if (rating) place.rating = Number(rating.replace(',', '.'));
    const reviews = textOf(qs(d, '.RDApEe') ?? qs(d, '.UY7F9') ?? qs(d, '.HypWnf'));
    const n = Number(reviews.replace(/[^\d]/g, ''));
    if (reviews && Number.isFinite(n) && n > 0) place.reviews = n;
    const lines = d.childNodes.map((c) => textOf(c as HTMLElement)).filter((t) => t && t !== title);
    if (lines.length) place.extensions = lines;
    const cid = closest(d, '[data-cid]')?.getAttribute('data-cid');
    if (cid) place.place_id = cid;
    places.push(place);
  }
  return places.length ? { places } : undefined;
};
