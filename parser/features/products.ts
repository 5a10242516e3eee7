import { type HTMLElement, qs, qsa, textOf } from '../dom/index.js';
import { recordSource } from '../sources.js';
import { countOf, type Item, pageImages, priceOf, ratingOf, thumbnailOf } from './blockCards.js';

/**
 * "Popular products" (2023–24 desktop): a grid of product cards (`.MtXiu`, or `[data-attrid=apg-product-result]` in
 * the `sho-apgc__product-grid` layout), unpaid, each with the product's name
 * (`.gkQHve`), a price (`.lmQWe`), the store (`.WJMUdc`), a rating (`.yi40Hd`) and a review count (`.RDApEe`), under
 * SerpApi's `immersive_products` names. A card repeated in the grid (same name and store) is reported once.
 */
export const immersiveProducts = (root: HTMLElement): Item[] | undefined => {
  const out: Item[] = [];
  const seen = new Set<string>();
  let images: ((id: string) => string | undefined) | undefined;
  for (const card of qsa(root, '.MtXiu, [data-attrid="apg-product-result"]')) {
    const titleEl = qs(card, '.gkQHve');
    const title = textOf(titleEl);
    if (!title || !titleEl) continue;
    const source = textOf(qs(card, '.WJMUdc'));
    const key = `${title}\u0000${source}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const item: Item = { position: out.length + 1, title };
    if (source) item.source = source;
    const price = textOf(qs(card, '.lmQWe'));
    if (price) {
      item.price = price;
      const value = priceOf(price);
      if (value !== undefined) item.extracted_price = value;
    }
    const rating = ratingOf(textOf(qs(card, '.yi40Hd')));
    if (rating !== undefined) item.rating = rating;
    const reviews = countOf(textOf(qs(card, '.RDApEe')));
    if (reviews !== undefined) item.reviews = reviews;
    images ??= pageImages(root);
    const thumbnail = thumbnailOf(card, images, titleEl);
    if (thumbnail) item.thumbnail = thumbnail;
    out.push(recordSource(item, card));
  }
  return out.length ? out : undefined;
};
