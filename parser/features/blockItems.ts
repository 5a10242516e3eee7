import { closest, closestWhere, type HTMLElement, qs, qsa, textOf } from '../dom/index.js';
import {
  anchorLeaves,
  attr,
  countOf,
  DURATION,
  descendantWith,
  durationOf,
  firstIn,
  type Item,
  isSeparator,
  type Leaf,
  type LinkCard,
  leavesOf,
  linkCards,
  ratingOf,
  thumbnailOf,
  widen,
  within,
} from './blockCards.js';

/**
 * Readers of one card each, under SerpApi's names per block. Google marks a card's parts as separate elements
 * (heading, source, date, separators), so each part is read from its own element and titles never carry the
 * source or date. Where Google offers a marker that does not depend on the interface language (`role=heading`,
 * `cite`, `data-ts` on a date, the `aria-label` of a duration badge, a separator piece) it is what decides.
 */
type Images = (id: string) => string | undefined;

/** A card's heading: `role=heading`, else a heading tag (a 2025–26 player's title is an `h1`). */
const headingIn = (anchors: HTMLElement[]): HTMLElement | undefined =>
  firstIn(anchors, '[role="heading"]') ?? firstIn(anchors, 'h1, h2, h3, h4');

const set = (item: Item, name: string, value: unknown): void => {
  if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) return;
  item[name] = value;
};

/** The piece after a separator: "· evian" is one piece on some layouts, "·" and "evian" two on others. */
const afterSeparator = (leaves: Leaf[], i: number): { text: string; at: number } | undefined => {
  const own = leaves[i]?.text.replace(/^[·•]\s*/, '') ?? '';
  if (own) return { text: own, at: i };
  const next = leaves[i + 1];
  return next ? { text: next.text, at: i + 1 } : undefined;
};

/** The block (`div`) child of `outer` that holds `inner`; `outer` itself for text outside such a child. */
const childOf = (outer: HTMLElement, inner: HTMLElement): HTMLElement => {
  let el = inner;
  while (el !== outer && el.parentNode && el.parentNode !== outer) el = el.parentNode;
  return el.localName === 'div' ? el : outer;
};

const isSeparatorLead = (text: string): boolean => isSeparator(text) || /^[·•]\s/.test(text);

const inCite = (leaf: Leaf): boolean => !!closestWhere(leaf.el, (e) => e.localName === 'cite');

/**
 * A video card (2021–26): "title · platform · channel · date" around a duration badge. The platform is the `cite`
 * or the piece before the first separator, the channel the piece after it; the title is the card's heading when
 * that holds nothing else, else the element before the platform; the date is the piece after the channel.
 */
export const videoItem = (card: LinkCard, images: Images): Item | undefined => {
  const leaves = anchorLeaves(card.anchors).filter((l) => !DURATION.test(l.text));
  const badge = durationOf(card.box);
  const sep = leaves.findIndex((l) => isSeparatorLead(l.text));
  const cite = leaves.findIndex(inCite);
  const platformAt = cite >= 0 ? cite : sep - 1;
  const platform = leaves[platformAt];
  let titleEl: HTMLElement | undefined;
  const heading = headingIn(card.anchors);
  if (heading && !(platform && within(platform.el, heading))) titleEl = heading;
  else if (platform && platformAt > 0) {
    const anchor = card.anchors.find((a) => within(platform.el, a)) ?? card.box;
    titleEl = widen(leaves[platformAt - 1] as Leaf, anchor, platform.el);
  } else titleEl = heading;
  const title = textOf(titleEl) || textOf(card.anchors.find((a) => textOf(a)));
  if (!title) return undefined;
  const item: Item = { title, link: card.link };
  set(item, 'thumbnail', thumbnailOf(card.box, images, titleEl));
  let next = platformAt + 1;
  if (sep >= platformAt && sep >= 0 && platform) {
    const channel = afterSeparator(leaves, sep);
    set(item, 'channel', channel?.text);
    next = (channel?.at ?? sep) + 1;
  }
  set(item, 'duration', badge?.text);
  set(item, 'platform', platform?.text);
  if (platform) {
    const date = leaves.slice(next).find((l) => !isSeparatorLead(l.text) && l.text !== badge?.spoken);
    set(item, 'date', date?.text);
  }
  return item;
};

/**
 * A top-stories card (2021–24): source, heading, date. The heading is `role=heading`; a few mobile layouts have
 * none, and there the title is the longest piece. The source is the first piece before the title (a publisher
 * shown only as a logo gives none), the date the last piece after it.
 */
export const topStoryItem = (card: LinkCard, images: Images): Item | undefined => {
  const leaves = anchorLeaves(card.anchors).filter((l) => !isSeparator(l.text) && !DURATION.test(l.text));
  const heading = firstIn(card.anchors, '[role="heading"]');
  // A 2021 mobile heading wraps source, title and date, each in a child of its own.
  const scope = heading ? leaves.filter((l) => within(l.el, heading)) : leaves;
  const longest = scope.reduce<Leaf | undefined>((a, l) => (a && a.text.length >= l.text.length ? a : l), undefined);
  const parts = heading ? new Set(scope.map((l) => childOf(heading, l.el))) : undefined;
  const titleEl =
    heading && parts?.size === 1 ? heading : heading && longest ? childOf(heading, longest.el) : longest?.el;
  const title = textOf(titleEl);
  if (!titleEl || !title) return undefined;
  const item: Item = { title, link: card.link };
  const before = leaves.filter((l) => l.el.order < titleEl.order);
  const after = leaves.filter((l) => l.el.order > titleEl.end);
  set(item, 'source', before[0]?.text);
  set(item, 'date', after.at(-1)?.text);
  set(item, 'thumbnail', thumbnailOf(card.box, images, titleEl));
  set(item, 'duration', durationOf(card.box)?.text);
  return item;
};

/**
 * A "What people are saying" card (2024–26): heading, an optional snippet, a meta line whose date carries
 * `data-ts` (epoch seconds, in any interface language) and whose other pieces are engagement ("90+ reactions"),
 * then the author line ("ceressoft · Facebook", or "theinfmadness" over "Instagram"). A video card carries a
 * player before the card proper; the card is the anchor that holds the heading.
 */
export const perspectiveItem = (card: LinkCard, images: Images): Item | undefined => {
  let anchor: HTMLElement | undefined;
  let heading: HTMLElement | null = null;
  for (const a of card.anchors) {
    heading = qs(a, '[role="heading"]');
    if (heading) {
      anchor = a;
      break;
    }
  }
  const title = textOf(heading);
  if (!anchor || !heading || !title) return topStoryItem(card, images);
  const item: Item = { title, link: card.link };
  const leaves = leavesOf(anchor).filter((l) => !within(l.el, heading));
  const stamp = descendantWith(anchor, 'data-ts');
  const meta = stamp?.parentNode;
  if (stamp && meta) {
    const snippet = leaves.filter((l) => l.el.order > heading.end && l.el.order < meta.order);
    // The snippet's own label ("Popular comment ·") ends in a separator; a lone "." is a "more" link.
    const text = snippet.filter((l) => !/[·•]$/.test(l.text) && !isSeparator(l.text)).map((l) => l.text);
    set(item, 'snippet', text.join(' '));
    set(item, 'date', textOf(stamp));
    const engagement = leavesOf(meta).filter((l) => !isSeparator(l.text) && !within(l.el, stamp));
    set(
      item,
      'extensions',
      engagement.map((l) => l.text),
    );
    const byline = leaves.filter((l) => l.el.order > meta.end);
    const [first, second] = byline;
    const split = first?.text.split(' · ');
    if (split && split.length > 1) {
      set(item, 'author', split.slice(0, -1).join(' · '));
      set(item, 'source', split.at(-1));
    } else {
      set(item, 'author', first?.text);
      set(item, 'source', second?.text);
    }
  }
  const thumbnail = thumbnailOf(card.box, images, heading);
  if (thumbnail) item.thumbnails = [thumbnail];
  set(item, 'duration', durationOf(card.box)?.text);
  return item;
};

/**
 * A "Discussions and forums" card (2023–24): title, then "site · date · 38 posts" with every piece optional but
 * the site. Which of one remaining piece is the date the pieces cannot say; the line's `aria-label` can: it reads
 * "site date, 38 posts", so a piece joined to the site by a comma is engagement, one joined by a space the date.
 */
export const forumItem = (card: LinkCard): Item | undefined => {
  const titleEl = firstIn(card.anchors, '[role="heading"]') ?? firstIn(card.anchors, '[role="link"]');
  const leaves = anchorLeaves(card.anchors);
  const title = textOf(titleEl) || leaves[0]?.text;
  if (!title) return undefined;
  const item: Item = { title, link: card.link };
  const rest = leaves.filter((l) => !titleEl || l.el.order > titleEl.end);
  const source = rest[0];
  if (!source) return item;
  set(item, 'source', source.text);
  const parts = rest.slice(1).filter((l) => !isSeparator(l.text));
  const labelled = closestWhere(source.el, (e) => attr(e, 'aria-label') !== undefined);
  const label = (labelled && attr(labelled, 'aria-label')) ?? '';
  const firstIsDate = parts.length > 1 || (parts.length === 1 && !label.startsWith(`${source.text},`));
  if (firstIsDate) set(item, 'date', parts[0]?.text);
  set(
    item,
    'extensions',
    parts.slice(firstIsDate ? 1 : 0).map((l) => l.text),
  );
  return item;
};

/**
 * A recipe card (2021–24): heading, source, rating (a star image whose number is the piece before it), review
 * count in parentheses, total time, ingredients. The ingredients line is `.LDr9cf` on every layout seen; the
 * time is the remaining piece with a digit ("No reviews" has none).
 */
export const recipeItem = (card: LinkCard, images: Images): Item | undefined => {
  const heading = headingIn(card.anchors);
  const title = textOf(heading);
  if (!heading || !title) return undefined;
  const item: Item = { title, link: card.link };
  const leaves = leavesOf(card.box).filter((l) => l.el.order > heading.end);
  set(item, 'source', leaves[0]?.text);
  const stars = qsa(card.box, '[role="img"]').find((e) => e.order > heading.end && e.getAttribute('aria-label'));
  const ingredientsEl = qs(card.box, '.LDr9cf');
  let used = 1;
  if (stars) {
    const at = leaves.findIndex((l) => l.el.order > stars.order);
    const shown = leaves.filter((l) => l.el.order < stars.order).at(-1);
    set(item, 'rating', ratingOf(shown && shown !== leaves[0] ? shown.text : stars.getAttribute('aria-label')));
    set(item, 'reviews', countOf(leaves[at]?.text));
    used = at + (countOf(leaves[at]?.text) === undefined ? 0 : 1);
  }
  const time = leaves.slice(used).find((l) => /\d/.test(l.text) && !(ingredientsEl && within(l.el, ingredientsEl)));
  set(item, 'total_time', time?.text);
  const ingredients = textOf(ingredientsEl);
  set(item, 'ingredients', ingredients ? ingredients.split(/\s*,\s*/).filter(Boolean) : undefined);
  set(item, 'thumbnail', thumbnailOf(card.box, images, heading));
  return item;
};

/**
 * An image of an image pack: the page it is from (`data-lpage`, else the card's link), its title and site name,
 * the picture. 2025–26 cards name their title and site by `aria-labelledby` (an empty link); older ones print the
 * title, if at all, before the site name inside the link.
 */
export const imageItem = (card: LinkCard, images: Images): Item | undefined => {
  const anchor = card.anchors[0] as HTMLElement;
  const holder = closestWhere(anchor, (e) => attr(e, 'data-lpage') !== undefined);
  const page = (holder && attr(holder, 'data-lpage')) || card.link;
  if (!/^https?:\/\//.test(page)) return undefined;
  const ids = (attr(anchor, 'aria-labelledby') ?? '').split(/\s+/).filter(Boolean);
  const named = ids.map((id) => textOf(anchor.doc?.byId.get(id)?.[0])).filter(Boolean);
  const parts = named.length ? named : anchorLeaves(card.anchors).map((l) => l.text);
  const item: Item = {};
  set(item, 'title', parts.length > 1 ? parts[0] : undefined);
  set(item, 'source', page);
  set(item, 'source_name', parts.at(-1));
  set(item, 'thumbnail', thumbnailOf(holder ?? card.box, images));
  return item.source_name || item.thumbnail ? item : undefined;
};

/** A link into Google Images (2021–22 packs open the image there): `tbm=isch`, `udm=2` or the old `/imgres`. */
const GOOGLE_IMAGES =
  /^(?:https?:\/\/(?:www\.)?google\.[a-z.]+)?\/(?:imgres\?|search\?(?:[^#]*&)?(?:tbm=isch|udm=2)(?:[&#]|$))/i;

/**
 * One item marked `data-attrid="images universal"`: the marker and its `data-lpage` (the page the image is on) do
 * not depend on the interface language or on the pack's heading. 2023–24 items link to that page and print title
 * and site name in the link, read as `imageItem` reads them; 2021–22 items print neither and link, if at all,
 * into Google Images, which is SerpApi's `link`.
 */
export const universalImageItem = (el: HTMLElement, images: Images): Item | undefined => {
  const page = attr(el, 'data-lpage');
  if (!page || !/^https?:\/\//.test(page)) return undefined;
  const card = linkCards(el)[0];
  const read = card ? imageItem(card, images) : undefined;
  const item: Item = {};
  set(item, 'title', read?.title);
  const viewer = qsa(el, 'a[href]').find((a) => GOOGLE_IMAGES.test(a.getAttribute('href') ?? ''));
  const href = viewer?.getAttribute('href');
  set(item, 'link', href?.startsWith('/') ? `https://www.google.com${href}` : href);
  set(item, 'source', page);
  set(item, 'source_name', read?.source_name);
  set(item, 'thumbnail', read?.thumbnail ?? thumbnailOf(el, images));
  return item.source_name || item.thumbnail ? item : undefined;
};

/** One job of Google's jobs box (2022–24): the list items keep their plugin class names. */
export const jobItems = (block: HTMLElement): Item[] =>
  qsa(block, '.gws-plugins-horizon-jobs__li-ed').flatMap((li) => {
    const title = textOf(qs(li, '[role="heading"]') ?? qs(li, '.BjJfJf'));
    if (!title) return [];
    const item: Item = { title };
    set(item, 'company_name', textOf(qs(li, '.vNEEBe')));
    const [location, via] = qsa(li, '.Qk80Jf').map(textOf);
    set(item, 'location', location);
    set(item, 'via', via);
    set(item, 'extensions', qsa(li, '.LL4CDc').map(textOf).filter(Boolean));
    return [item];
  });

/**
 * The X/Twitter box under SerpApi's shape: the account's title, link and displayed link, then its posts. Each
 * post is a card (`g-inner-card`) whose heading is the post's text and whose line below ends with the date.
 */
export const twitterResults = (section: HTMLElement, images: Images): Item | undefined => {
  const header = qs(section, 'h3');
  const headerLink = header ? closest(header, 'a') : null;
  const out: Item = {};
  set(out, 'title', textOf(header));
  set(out, 'link', headerLink?.getAttribute('href'));
  set(out, 'displayed_link', textOf(qs(section, 'cite')));
  const tweets: Item[] = [];
  for (const cardEl of qsa(section, 'g-inner-card')) {
    const a = qsa(cardEl, 'a[href]').find((e) => /\/status\//.test(e.getAttribute('href') ?? ''));
    const link = a?.getAttribute('href');
    if (!link || !/^https?:\/\//.test(link)) continue;
    const text = qs(cardEl, '[role="heading"]');
    const tweet: Item = { link };
    set(tweet, 'snippet', textOf(text));
    const line = text ? leavesOf(cardEl).filter((l) => l.el.order > text.end) : [];
    const sep = line.findIndex((l) => isSeparator(l.text));
    set(tweet, 'published_date', sep >= 0 ? line[sep + 1]?.text : undefined);
    set(tweet, 'thumbnail', thumbnailOf(cardEl, images, text ?? undefined));
    tweets.push(tweet);
  }
  set(out, 'tweets', tweets);
  return out.title || tweets.length ? out : undefined;
};
