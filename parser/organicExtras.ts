import { closestWhere, type HTMLElement, hasClass, qs, qsa, spacedText, textOf } from './dom/index.js';
import { isGoogleInternal, unwrapLink } from './links.js';

interface Sitelink {
  title: string;
  link: string;
  snippet?: string;
}

/**
 * Inline sitelink rows: `.HiHjCd` (≤2024 desktop), `.JpOecb a.GqbEwc` (2023 mobile), `[jsname=m7irxf]` (2021
 * mobile), `[role=list]` (2024–26 box) and `.kXlpWb` (2025–26: a list of further pages from the same site under a
 * result, ending in a "More results from …" search link). The basic (no-JS) page has its own (isLinkLine). Every
 * part keeps the "ancestor subject" form, which the selector engine answers from the ancestor's short list.
 */
const INLINE_ROWS =
  '.HiHjCd a, .fl.VuQJ2e a, div[role="list"] a[href], .IThcWe a, [jsname="m7irxf"] a, .JpOecb a.GqbEwc, .kXlpWb a[href]';

/** The lines of a basic (no-JS) result: the innermost `div.BNeawe.s3v9rd.AP7Wnd` blocks (they nest). */
export const basicLines = (box: HTMLElement): HTMLElement[] =>
  qsa(box, 'div.BNeawe.s3v9rd.AP7Wnd').filter((l) => !qs(l, 'div.s3v9rd'));

/** Whether `line` holds text, and none of it outside the elements `part` picks, bar " · " separators. */
const onlyMadeOf = (line: HTMLElement, part: (e: HTMLElement) => boolean): boolean =>
  /^[\s·|]*$/.test(spacedText(line, part)) && textOf(line) !== '';

/** A basic-page line that is nothing but links: the result's sitelinks. */
export const isLinkLine = (line: HTMLElement): boolean =>
  qs(line, 'a') !== null && onlyMadeOf(line, (e) => e.localName === 'a');

/**
 * A basic-page line that is nothing but facts in `span.r0bn4c` ("13 380,00 ₽", "Betyg 4,7 (52)" with its stars):
 * the rich line. A date is such a span too, but it leads a snippet line and leaves the snippet outside the spans.
 */
export const isFactLine = (line: HTMLElement): boolean =>
  qs(line, '.r0bn4c') !== null && onlyMadeOf(line, (e) => hasClass(e, 'r0bn4c'));

/**
 * Sitelinks come in two forms (SerpApi's `inline` and `expanded`): a row of short links under the snippet (INLINE_ROWS)
 * and a table of titled cards (`.usJj9c`). The cards sit beside the result box, inside the "Web Result with Site
 * Links" block (`.BYM4Nd`) that holds both, so they are looked for there. A video's key moments (`a[data-time]`,
 * links into the same video) are no sitelinks.
 */
export const sitelinksOf = (
  box: HTMLElement,
  mainLink: string,
): { inline?: Sitelink[]; expanded?: Sitelink[] } | undefined => {
  const expanded: Sitelink[] = [];
  const cardScope = closestWhere(box, (e) => hasClass(e, 'BYM4Nd')) ?? box;
  for (const card of qsa(cardScope, '.usJj9c')) {
    const a = qs(card, 'a[href]');
    const link = unwrapLink(a?.getAttribute('href'));
    const title = textOf(a);
    if (!link || !title || link === mainLink) continue;
    const snippet = textOf(qs(card, '.zz3gNc') ?? qs(card, '.s'));
    expanded.push(snippet ? { title, link, snippet } : { title, link });
  }
  const inline: Sitelink[] = [];
  const basic = basicLines(box).filter(isLinkLine);
  for (const a of [...qsa(box, INLINE_ROWS), ...basic.flatMap((l) => qsa(l, 'a[href]'))]) {
    if (a.rawAttrs.includes('data-time') && a.getAttribute('data-time') !== undefined) continue;
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
 * The line of ratings, prices and similar facts a result may carry: `.fG8Fp`/`.uo4vr` (≤2023), `.smukrd` (2024), the
 * result grid's rich slot (`data-snf="mCCBcf"`, 2023–25, which also holds the 2023 mobile and 2025 lines), and on
 * the basic page its fact line (isFactLine). Empty placeholders (Google leaves an empty `.fG8Fp` on many results) are
 * skipped. Every grid slot also carries `data-sncf`, which the document indexes: the slots are found through it, as
 * a lookup by `data-snf` itself would scan the whole page once more.
 */
const RICH_LINES = ['.fG8Fp', '.uo4vr', '.smukrd'];

const richLine = (box: HTMLElement): HTMLElement | undefined => {
  for (const sel of RICH_LINES) {
    for (const el of qsa(box, sel)) if (textOf(el)) return el;
  }
  for (const slot of qsa(box, '[data-sncf]')) {
    if (slot.rawAttrs.includes('mCCBcf') && slot.getAttribute('data-snf') === 'mCCBcf' && textOf(slot)) return slot;
  }
  return basicLines(box).find(isFactLine);
};

/** A rating label ("Rating:", "Betyg", "Рейтинг:") marks a line as ratings where no stars are drawn. */
const RATING_WORD = /rating|bewertung|note|valoración|betyg|рейтинг/i;

/**
 * The rating: the first number of one or two digits (and decimals) that is no price (next to a currency sign), no
 * percentage, no count in parentheses and no part of a longer number: "Rating: 4.7", "Betyg 4,7 (52)",
 * "4.5(13,707)", "4.6store rating", "Rating: 8.7/10", "￥14,672 · 4.6(76)".
 */
const RATING = /(?:^|[^\d.,(\p{Sc}])(\d{1,2}(?:[.,]\d{1,2})?)(?![\d%)]|[.,]\d|\s?\p{Sc})/u;

/** A number, thousands grouped by "," "." or a space before three digits ("1 280"), then the word it counts. */
const COUNTED = /(\d(?:[\d.,]|[ \u00a0\u202f](?=\d{3}))*)\s+(\p{L}+)/gu;

/** Localized words that follow a count of reviews or votes. */
const REVIEW_WORDS =
  /^(?:reviews?|votes?|ratings?|avis|Rezensionen|reseñas|Bewertungen|röster|omdömen|recensioner|отзыв\p{L}*|голос\p{L}*)/iu;

/**
 * Ratings, prices and similar facts are pulled out as SerpApi's `detected_extensions`; the wording around them is
 * localized, so only digits, separators, stars and a few count words are relied on. A line that comes before the
 * snippet is SerpApi's `top`, one after it `bottom`.
 */
export const richSnippetOf = (box: HTMLElement, snippetEl?: HTMLElement): Record<string, unknown> | undefined => {
  const line = richLine(box);
  const text = textOf(line).replace(/[\u200e\u200f]/g, '');
  if (!line || !text) return undefined;
  const extensions = text
    .split(/\s*·\s*/)
    .map((s) => s.trim())
    .filter(Boolean);
  const detected: Record<string, number | string> = {};
  // The stars' own label ("Rated 5.0 out of 5") is the drawing, rounded to half stars; the number shown is the rating.
  const stars = qs(line, '.Hk2yDb') ?? qs(box, 'g-review-stars, .z3HNkc');
  if (stars || RATING_WORD.test(text)) {
    const rating = RATING.exec(text);
    if (rating?.[1]) detected.rating = Number(rating[1].replace(',', '.'));
    // The count follows the rating, in parentheses or with its word; a scale ("/10") is no count.
    const after = (rating ? text.slice(rating.index + rating[0].length) : text).replace(/^\s*\/\s*\d+/, '');
    const paren = /\(([\d.,\s]+)\)/.exec(after);
    const counted = [...after.replace(/·/g, ' ').matchAll(COUNTED)].find((m) => REVIEW_WORDS.test(m[2] ?? ''));
    const digits = paren?.[1] ?? counted?.[1];
    const n = digits ? Number(digits.replace(/[.,\s]/g, '')) : Number.NaN;
    if (Number.isFinite(n) && n > 0) detected.reviews = n;
  }
  // Thousands may be grouped with spaces ("1 500,00 ₽"); a space is only part of the number before three digits.
  const price = /([$€£¥₹₽]\s?\d[\d.,]*|\d(?:[\d.,]|[ \u00a0\u202f](?=\d{3}))*\s?(?:€|US\$|\$|₽|kr\b))/.exec(text);
  if (price?.[1]) detected.price = price[1];
  const where = snippetEl && line.order < snippetEl.order ? 'top' : 'bottom';
  return { [where]: { extensions, ...(Object.keys(detected).length ? { detected_extensions: detected } : {}) } };
};

export interface KeyMoment {
  text: string;
  time: string;
  link: string;
  thumbnail?: string;
}

/** "00:35", "1:39", "1:02:07": a key moment's start as Google prints it */
const CLOCK = /^\d{1,2}(?::\d{2}){1,2}$/;

/** The v= of a YouTube watch link (or the path of another video link), to tell links into the same video. */
const videoOf = (link: string): string => {
  try {
    const u = new URL(link);
    return `${u.hostname.replace(/^(www|m)\./, '')}${u.pathname}?${u.searchParams.get('v') ?? ''}`;
  } catch {
    return link;
  }
};

/**
 * A video result's key moments (2024–26): links into the same video at a time, `a[data-time]`, each with the start
 * ("00:35") and the chapter's title as text and a frame as its image. Google prints the list twice (a strip and an
 * expandable list); each moment is taken once, by its time, in page order. SerpApi's `key_moments[] {text, time,
 * link, thumbnail}`.
 */
export const keyMomentsOf = (box: HTMLElement, mainLink: string): KeyMoment[] | undefined => {
  const video = videoOf(mainLink);
  const scope = closestWhere(box, (e) => hasClass(e, 'BYM4Nd')) ?? box;
  const moments: KeyMoment[] = [];
  const seen = new Set<string>();
  for (const a of qsa(scope, 'a[data-time]')) {
    const at = a.getAttribute('data-time');
    const link = unwrapLink(a.getAttribute('href'));
    if (!at || seen.has(at) || !link || videoOf(link) !== video) continue;
    const pieces = qsa(a, 'div, span')
      .filter((e) => !qs(e, 'div, span'))
      .map((e) => textOf(e))
      .filter(Boolean);
    const time = pieces.find((p) => CLOCK.test(p));
    const text = pieces
      .filter((p) => !CLOCK.test(p) && !/^from$/i.test(p))
      .reduce((a, p) => (p.length > a.length ? p : a), '');
    if (!time || !text) continue;
    seen.add(at);
    const img = qs(a, 'img');
    const thumbnail = img?.getAttribute('data-src') ?? img?.getAttribute('src');
    moments.push({ text, time, link, ...(thumbnail && /^https?:/.test(thumbnail) ? { thumbnail } : {}) });
  }
  return moments.length ? moments : undefined;
};
