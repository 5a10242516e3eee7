import { closest, type HTMLElement, qs, qsa, textOf } from '../dom/index.js';
import { recordSource } from '../sources.js';
import { countOf } from './blockCards.js';

/**
 * Local pack: each place is a `.rllt__details` block (2020–25), next to a map. The place's name is a heading
 * (`role=heading`), inside the block or beside it in the card, depending on the layout; older mobile pages have no
 * heading and start the block with the name. The other lines come in a fixed order whatever the language, and
 * their order, not a class, tells them apart:
 * 1. the summary: "4.1(6.2K) · $$ · Electronics store" (rating, review count, price, type; "No reviews · Type"
 *    when unrated; mobile pages leave the type for the next line);
 * 2. the address line: "[Type · ]1717 Harrison St[ · In Mall][ · (415) 626-9682]";
 * 3. the rest: opening hours ("Open ⋅ Closes 9PM", with U+22C5), service options, a review quote, a description.
 */
export const localResults = (root: HTMLElement): Record<string, unknown> | undefined => {
  const places: Array<Record<string, unknown>> = [];
  for (const d of qsa(root, '.rllt__details')) {
    const place = readPlace(d, places.length + 1);
    if (place) places.push(recordSource(place, d.parentNode ?? d));
  }
  return places.length ? { places } : undefined;
};

const HEADING = '[role="heading"], .dbg0pd, .OSrXXb';

const readPlace = (d: HTMLElement, position: number): Record<string, unknown> | undefined => {
  const inside = qs(d, HEADING);
  // Desktop 2020–23 cards put the heading beside the details block, in their shared parent.
  const beside = inside ? null : qs(d.parentNode, HEADING);
  const lines = d.childNodes.map((c) => textOf(c as HTMLElement)).filter(Boolean);
  const title = textOf(inside ?? beside) || (lines[0] ?? '');
  if (!title) return undefined;
  const rest = lines[0] === title ? lines.slice(1) : lines.filter((l) => l !== title);
  const place: Record<string, unknown> = { position, title };
  const summary = rest.shift();
  let type: string | undefined;
  parts(summary ?? '').forEach((part, i) => {
    const rated = RATING.exec(part);
    if (rated) {
      place.rating = Number((rated[1] as string).replace(',', '.'));
      const reviews = countOf(rated[2] as string);
      if (reviews !== undefined) place.reviews = reviews;
    } else if (PRICE.test(part)) place.price = part;
    // An unrated place starts its summary with the page's words for "no reviews" ("Нет отзывов · Магазин").
    else if (i > 0) type = part;
  });
  // The address line holds digits (house number, phone, distance); a line without any before it is a mall or a
  // description ("Олимпик Плаза"). Hours are never the address.
  const candidates = rest.slice(0, 2).filter((l) => !l.includes('⋅'));
  const address = candidates.find((l) => /\d/.test(l)) ?? candidates[0];
  if (address) {
    rest.splice(rest.indexOf(address), 1);
    const pieces = parts(address);
    // Mobile pages write "Coffee shop · 1594 Market St": the type moves down when the summary had none.
    if (type === undefined && pieces.length > 1 && !/\d/.test(pieces[0] as string)) type = pieces.shift();
    if (pieces.length > 1 && DISTANCE.test(pieces[0] as string)) place.distance = pieces.shift();
    const phone = pieces.findIndex((p) => PHONE.test(p));
    if (phone >= 0) place.phone = pieces.splice(phone, 1)[0];
    if (pieces.length) place.address = pieces.join(' · ');
  }
  if (type) place.type = type;
  const hours = rest.findIndex((l) => l.includes('⋅'));
  if (hours >= 0) place.hours = rest.splice(hours, 1)[0];
  if (rest.length) place.extensions = rest;
  const cid = closest(d, '[data-cid]')?.getAttribute('data-cid');
  if (cid) place.place_id = cid;
  return place;
};

const parts = (line: string): string[] =>
  line
    .split(/\s*·\s*/)
    .map((p) => p.trim())
    .filter(Boolean);

/** "4.1(6.2K)", "4,4 (1.802)", "3.9 (427)": a rating with one decimal, then the review count in brackets. */
const RATING = /^(\d[.,]\d)\s*\(([^)]+)\)$/;
/** "2,9 км", "1.2 mi", "350 m": how far the place is, before its address. */
const DISTANCE = /^\d+(?:[.,]\d+)?\s*\p{L}{1,3}\.?$/u;
/** "$", "$$", "€€", "₫₫", "$10–20": a price level starts with a currency sign. */
const PRICE = /^\p{Sc}/u;
/** "(415) 626-9682", "092 735 33 33", "8 (495) 642-19-58": seven or more digits and phone punctuation only. */
const PHONE = /^(?=(?:\D*\d){7})[\d\s()+\-.]+$/;
