import { isGoogleInternal, textOf, unwrapLink } from './dom.js';
import type { HTMLElement } from './html.js';
import { qs, qsa } from './select.js';

interface Sitelink {
  title: string;
  link: string;
  snippet?: string;
}

/**
 * Sitelinks come in two forms (SerpApi's `inline` and `expanded`): a row of short links under the snippet
 * (`.HiHjCd` ≤2023, `[jsname=m7irxf]` on the 2021 mobile page, `[role=list] a` in the 2024–26 box) and a table of titled cards (`.usJj9c`, inside `.BYM4Nd`),
 * which the result box wraps together with the main result.
 */
export const sitelinksOf = (
  box: HTMLElement,
  mainLink: string,
): { inline?: Sitelink[]; expanded?: Sitelink[] } | undefined => {
  const expanded: Sitelink[] = [];
  for (const card of qsa(box, '.usJj9c')) {
    const a = qs(card, 'a[href]');
    const link = unwrapLink(a?.getAttribute('href'));
    const title = textOf(a);
    if (!link || !title) continue;
    const snippet = textOf(qs(card, '.zz3gNc') ?? qs(card, '.s'));
    expanded.push(snippet ? { title, link, snippet } : { title, link });
  }
  const inline: Sitelink[] = [];
  const rows = qsa(box, '.HiHjCd a, .fl.VuQJ2e a, div[role="list"] a[href], .IThcWe a, [jsname="m7irxf"] a');
  for (const a of rows) {
    const link = unwrapLink(a.getAttribute('href'));
    const title = textOf(a);
    if (!link || !title || link === mainLink || isGoogleInternal(link) || !/^https?:/.test(link)) continue;
    if (inline.some((s) => s.link === link) || expanded.some((s) => s.link === link)) continue;
    inline.push({ title, link });
  }
  if (!expanded.length && !inline.length) return undefined;
  return { ...(inline.length ? { inline } : {}), ...(expanded.length ? { expanded } : {}) };
};

/**
 * Ratings, prices and similar lines sit under the snippet (`.fG8Fp`/`.uo4vr`, stars in `g-review-stars`).
 * The numbers are pulled out as SerpApi's `detected_extensions`; the wording around them is localized,
 * so only digits and separators are relied on.
 */
export const richSnippetOf = (box: HTMLElement): Record<string, unknown> | undefined => {
  const line = qs(box, '.fG8Fp') ?? qs(box, '.uo4vr');
  const text = textOf(line);
  if (!text) return undefined;
  const extensions = text
    .split(/\s*·\s*/)
    .map((s) => s.trim())
    .filter(Boolean);
  const detected: Record<string, number | string> = {};
  const rating = /(\d(?:[.,]\d)?)\s*(?:\/\s*5|\(|\s|$)/.exec(text);
  if (qs(box, 'g-review-stars, .z3HNkc') || /rating|bewertung|note|valoración/i.test(text)) {
    if (rating?.[1]) detected.rating = Number(rating[1].replace(',', '.'));
    const reviews = /\(?([\d.,\s]+)\)?\s*(?:reviews?|votes?|avis|Rezensionen|reseñas|Bewertungen|\))/i.exec(text);
    const n = reviews?.[1] ? Number(reviews[1].replace(/[.,\s]/g, '')) : Number.NaN;
    if (Number.isFinite(n) && n > 0) detected.reviews = n;
  }
  const price = /([$€£¥₹]\s?[\d.,]+|[\d.,]+\s?(?:€|US\$|\$))/.exec(text);
  if (price?.[1]) detected.price = price[1];
  return { bottom: { extensions, ...(Object.keys(detected).length ? { detected_extensions: detected } : {}) } };
};
