import { closest, type HTMLElement, hasClass, qs, qsa, spacedText, textOf } from '../dom/index.js';
import { unwrapLink } from '../links.js';
import { aboutPanel } from './aboutPanel.js';
import { attr, countOf, pageImages, ratingOf, thumbnailOf, within } from './blockCards.js';

type Panel = Record<string, unknown>;
type Images = (id: string) => string | undefined;

/**
 * Knowledge panel: `.kp-wholepage` (2020–26; a right-hand `#rhs .kp-wholepage` or the `-osrp` top layout) or the
 * older `#rhs .kp-blk`. Fields are found by `data-attrid`, which names the Freebase-style property and does not
 * depend on the interface language: `title`, `subtitle`, `description`, and `kc:/…`/`ss:/…` facts whose label is
 * `.w8qArf` and value `.LrzXr`. Fact keys come from the labels, as SerpApi's do (so they are in the page's language).
 *
 * Since 2024 the `-osrp` layout splits the panel: the header (title, subtitle) opens the page and the body
 * (description, facts) is a `.kp-wholepage` block among the results; both are read.
 *
 * A page may hold an entity panel and a local-business panel ("domain": "Domain name" and "Domain Oakland"). SerpApi
 * reports one `knowledge_graph`, so the first panel is the one the page puts first: on top of the right-hand column
 * on desktop (there the entity), first among the results on mobile (there the business). The others follow in page
 * order, each read the same way on its own (`other_knowledge_graphs`, a name of ours): their facts describe a
 * different thing, so they are never merged into the first.
 */
export const knowledgeGraphs = (root: HTMLElement): Panel[] => {
  const panels = entityPanels(root);
  if (panels.length) return panels;
  // 2025: a panel in the results column, headed "About …" (aboutPanel.ts).
  const about = aboutPanel(root);
  return about ? [about] : [];
};

const entityPanels = (root: HTMLElement): Panel[] => {
  // Pages hold several `.kp-wholepage` shells; the panel is the one around the entity title.
  const titleEl = qs(root, '[data-attrid="title"]') ?? qs(root, '#rhs h2');
  if (!titleEl) return [];
  const related = seeResultsAbout(titleEl);
  if (related) return [{ see_results_about: related }];
  const panel =
    closest(titleEl, '.kp-wholepage') ??
    closest(titleEl, '.kp-wholepage-osrp') ??
    closest(titleEl, '#rhs') ??
    closest(titleEl, '.kp-blk') ??
    titleEl.parentNode;
  if (!panel) return [];
  const images = pageImages(root);
  const scopes = [panel, ...splitBody(root, panel)];
  const kg = readPanel(scopes, images);
  return kg ? [kg, ...otherPanels(root, scopes, images)] : [];
};

/**
 * Panels after the first: a title in a `.kp-wholepage` of its own, outside the first panel's blocks (and not a
 * "See results about" box). Each is read within its own block only.
 */
const otherPanels = (root: HTMLElement, taken: HTMLElement[], images: Images): Panel[] => {
  const out: Panel[] = [];
  for (const titleEl of qsa(root, '.kp-wholepage [data-attrid="title"]')) {
    const panel = closest(titleEl, '.kp-wholepage');
    if (!panel || taken.some((p) => within(panel, p) || within(p, panel)) || seeResultsAbout(titleEl)) continue;
    taken.push(panel);
    const kg = readPanel([panel], images);
    if (kg) out.push(kg);
  }
  return out;
};

/** One panel from its blocks (the first holds the title); undefined for an empty shell. */
const readPanel = (scopes: HTMLElement[], images: Images): Panel | undefined => {
  const panel = scopes[0] as HTMLElement;
  const title =
    textOf(qs(panel, '[data-attrid="title"]')) || textOf(qs(panel, 'h2[data-attrid]')) || textOf(qs(panel, '.qrShPb'));
  // Google also emits an empty `.kp-wholepage` shell on pages without a panel; no title means no panel.
  if (!title) return undefined;
  const first = (selector: string): HTMLElement | undefined => {
    for (const s of scopes) {
      const el = qs(s, selector);
      if (el) return el;
    }
    return undefined;
  };
  const kg: Panel = { title };
  // A subtitle is the entity's type ("Muppet character"); product panels put their review count there ("(110)").
  const type = textOf(first('[data-attrid="subtitle"]'));
  if (type && /\p{L}/u.test(type)) kg.type = type;
  const pictures = headerImages(first('#media_result_group'), images);
  if (pictures) kg.header_images = pictures;
  const descEl = first('[data-attrid="description"]') ?? first('.kno-rdesc');
  const descSpan = qs(descEl, 'span');
  const description = textOf(descSpan ?? descEl).replace(/\s*(Wikipedia|Wikipédia|Википедия)$/, '');
  if (description) kg.description = description;
  const srcA = qs(descEl, 'a[href]');
  const srcLink = unwrapLink(srcA?.getAttribute('href'));
  if (srcA && srcLink && /^https?:/.test(srcLink)) kg.source = { name: textOf(srcA), link: srcLink };
  const site = first('[data-attrid="visit_official_site"] a[href]') ?? first('a.ab_button[href^="http"]');
  const website = unwrapLink(site?.getAttribute('href'));
  if (website) kg.website = website;
  const kgmid = [first('[data-kgmid]')?.getAttribute('data-kgmid'), first('[data-mid]')?.getAttribute('data-mid')].find(
    (id) => id && KGMID.test(id),
  );
  if (kgmid) kg.kgmid = kgmid;
  readLocal(kg, first);
  readFacts(kg, scopes);
  return kg;
};

/** `kc:/…` and `ss:/…` facts under their labels, the first of a label winning. */
const readFacts = (kg: Panel, scopes: HTMLElement[]): void => {
  for (const scope of scopes) {
    for (const fact of qsa(scope, '[data-attrid^="kc:/"], [data-attrid^="ss:/"]')) {
      // Business facts were read above under SerpApi's keys; their labels would repeat them in the page's language.
      if (LOCAL_ATTRIDS.has(fact.getAttribute('data-attrid') ?? '')) continue;
      const label = textOf(qs(fact, '.w8qArf')).replace(/[:：]\s*$/, '');
      const value = textOf(qs(fact, '.LrzXr') ?? qs(fact, '.kno-fv'));
      if (!label || !value) continue;
      // Letters with their combining marks (Thai "ที่อยู่", Hindi), digits; anything else becomes "_".
      const key = label
        .toLowerCase()
        .replace(/[^\p{L}\p{M}\p{N}]+/gu, '_')
        .replace(/^_|_$/g, '');
      if (key && kg[key] === undefined) kg[key] = value;
    }
  }
};

/**
 * The panel's own pictures (`#media_result_group`, 2021–25), SerpApi's `header_images`: per picture the `image` and
 * the page it is from (`source`, its `data-lpage`). Pictures Google reveals only on scrolling the row are in the
 * page and listed too. A picture Google hosts itself (a licensed one on gstatic) has no page: `image` only; one
 * the page loads later by script is not in it: `source` only. A business panel's photos and map carry no
 * `data-lpage` and are not listed.
 */
const headerImages = (group: HTMLElement | undefined, images: Images): Panel[] | undefined => {
  if (!group) return undefined;
  const out: Panel[] = [];
  // By their `data-attrid` (an indexed name; a look-up by `data-lpage` alone would search the whole page's text).
  for (const el of qsa(group, '[data-attrid="image"], [data-attrid="secondary image"]')) {
    // A trailer's still in the row has an empty `data-lpage`: it is a video, not a picture of the entity.
    const page = attr(el, 'data-lpage');
    if (!page || !/^https?:\/\//.test(page)) continue;
    const item: Panel = {};
    const image = thumbnailOf(el, images);
    if (image) item.image = image;
    if (!/^https?:\/\/[^/]*\.gstatic\.com\//.test(page)) item.source = page;
    if (item.image || item.source) out.push(item);
  }
  return out.length ? out : undefined;
};

const ADDRESS = 'kc:/location/location:address';
const HOURS = 'kc:/location/location:hours';
const PHONE = 'kc:/collection/knowledge_panels/has_phone:phone';
const STARS = 'kc:/collection/knowledge_panels/local_reviewable:star_score';
const SUMMARY = 'kc:/local:one line summary';
const ACTIONS = 'kc:/location/location:actions';
const LOCAL_ATTRIDS = new Set([ADDRESS, HOURS, PHONE, STARS, SUMMARY]);

/**
 * A local-business panel's facts, found by their `data-attrid` (the same in every interface language) and given
 * SerpApi's local keys: `type` (the one-line summary "Apartment building in Oakland, California"), `address`,
 * `phone`, `hours`, `rating`, `reviews`, `website`. Desktop facts carry a label ("Address:", "ที่อยู่:") beside the
 * value; mobile ones carry only the value, and put the phone and website in a row of buttons.
 */
const readLocal = (kg: Panel, first: (selector: string) => HTMLElement | undefined): void => {
  const address = first(`[data-attrid="${ADDRESS}"]`);
  const stars = first(`[data-attrid="${STARS}"]`);
  // Two indexed look-ups decide it: a page without a business panel pays nothing more.
  if (!address && !stars) return;
  const summary = first(`[data-attrid="${SUMMARY}"]`);
  // Mobile adds the open state beside the summary ("…CaliforniaOpen"): the first line is the type.
  let lines = summary ? withText(summary) : [];
  while (lines.length === 1) lines = withText(lines[0] as HTMLElement);
  const type = textOf(lines[0] ?? summary);
  if (type && kg.type === undefined) kg.type = type;
  const addressText = factValue(address);
  if (addressText) kg.address = addressText;
  const actions = first(`[data-attrid="${ACTIONS}"]`);
  const tel = qs(actions, 'a[href^="tel:"]');
  const phone =
    factValue(first(`[data-attrid="${PHONE}"]`)) ||
    tel?.getAttribute('data-phone-number') ||
    tel?.getAttribute('href')?.slice(4);
  if (phone) kg.phone = phone;
  // The collapsed line ("Open ⋅ Closes 6 PM"); the week's table beside it is hidden until clicked.
  const hoursEl = first(`[data-attrid="${HOURS}"]`);
  const hours = textOf(qs(hoursEl, '[aria-expanded="false"]')) || factValue(hoursEl);
  if (hours) kg.hours = hours;
  if (stars) {
    // The rating is drawn twice: as text hidden from screen readers ("3.4") and as stars labelled in the page's
    // language ("Rated 3.4 out of 5"). The count follows, in words ("137 Google reviews") or brackets ("(137)").
    const rating = qsa(stars, '[aria-hidden="true"]')
      .map((el) => textOf(el))
      .find((t) => /^\d(?:[.,]\d)?$/.test(t));
    if (rating) kg.rating = ratingOf(rating);
    const reviews = countOf(/\d[\d.,]*(?:\s?[kKmM](?!\p{L}))?/u.exec(spacedText(stars))?.[0]);
    if (reviews !== undefined) kg.reviews = reviews;
  }
  const site = unwrapLink(qs(actions, 'a[href^="http"]')?.getAttribute('href'));
  if (site && kg.website === undefined) kg.website = site;
};

/** A fact's value: `.LrzXr` beside a `.w8qArf` label on desktop, the fact's whole text on mobile (no label). */
const factValue = (fact: HTMLElement | null | undefined): string =>
  textOf(qs(fact, '.LrzXr')) || spacedText(fact, (e) => hasClass(e, 'w8qArf'));

/** Freebase (`/m/…`) and Knowledge Graph (`/g/…`) ids; pages also carry other `data-mid` values. */
const KGMID = /^\/[mg]\/[0-9a-z_]+$/;

/**
 * The body of a split panel, when the title's own block has neither description nor facts: the `.kp-wholepage`
 * block holding the description or the facts (2024–26), else the right-hand column holding the description
 * (2023–25); and the `.kp-wholepage` block holding the picture group, when that is another one (2023 films put
 * it among the results and the description on the right).
 */
const splitBody = (root: HTMLElement, panel: HTMLElement): HTMLElement[] => {
  if (qs(panel, '[data-attrid="description"]') || qs(panel, '[data-attrid^="kc:/"], [data-attrid^="ss:/"]')) return [];
  const text =
    qs(root, '.kp-wholepage [data-attrid="description"]') ??
    qs(root, '.kp-wholepage [data-attrid^="ss:/"]') ??
    qs(root, '#rhs [data-attrid="description"]');
  const bodies: HTMLElement[] = [];
  for (const anchor of [text, qs(root, '.kp-wholepage #media_result_group')]) {
    const body = anchor ? (closest(anchor, '.kp-wholepage') ?? closest(anchor, '#rhs')) : null;
    if (body && !within(body, panel) && !bodies.some((b) => within(body, b))) bodies.push(body);
  }
  return bodies;
};

/**
 * "See results about" (2023–25): a box headed like a panel whose items are links to other entities' searches
 * (`/search?…&q=…&si=…`), not a panel about one entity. SerpApi lists them as `see_results_about`.
 */
const seeResultsAbout = (titleEl: HTMLElement): Array<Record<string, unknown>> | undefined => {
  const box = titleEl.parentNode?.parentNode?.parentNode?.parentNode;
  if (!box || qs(box, '[data-attrid="subtitle"], [data-attrid="description"]')) return undefined;
  const items: Array<Record<string, unknown>> = [];
  for (const a of qsa(box, 'a[href^="/search?"][href*="si="]')) {
    // Down the wrappers (and past the image beside the text) to the block whose children are the item's lines.
    let lines = withText(a);
    while (lines.length === 1) lines = withText(lines[0] as HTMLElement);
    const [nameEl, ...rest] = lines;
    const name = textOf(nameEl);
    if (!name) continue;
    const item: Record<string, unknown> = { name, link: unwrapLink(a.getAttribute('href')) };
    // Each line may be written twice (a wide and a narrow variant): the first child says it once.
    const extensions = rest.map((l) => textOf(elementChildren(l)[0] ?? l)).filter(Boolean);
    if (extensions.length) item.extensions = extensions;
    const image = qs(a, 'img')?.getAttribute('src');
    if (image && !image.startsWith('data:')) item.image = image;
    items.push(item);
  }
  return items.length ? items : undefined;
};

const elementChildren = (el: HTMLElement): HTMLElement[] =>
  el.childNodes.filter((c): c is HTMLElement => c.nodeType === 1);

const withText = (el: HTMLElement): HTMLElement[] => elementChildren(el).filter((c) => textOf(c));
