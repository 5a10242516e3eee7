import { closest, type HTMLElement, qs, qsa, textOf } from '../dom/index.js';
import { unwrapLink } from '../links.js';
import { type Item, leavesOf, pageImages, thumbnailOf, within } from './blockCards.js';
import { answer, answerParts } from './questions.js';

/**
 * "Buying guide: Graphics Tablets" (2024 desktop product searches): a block of topics ("price", "popular brands",
 * …), each a line Google prints under it ("How much does a graphic tablet cost?", "Including Wacom, Huion, XP-Pen")
 * and an answer that opens on a click. SerpApi documents no such block: `buying_guide` is a name of ours (WebSearcher
 * labels it the same), `{title, topics[]}`. A topic is `{topic, summary}` plus either the answer as "People also
 * ask" gives one (`snippet`, `list`, `date`, `title`, `link`, `displayed_link`, read by the same code, from the
 * page's deferred fragments when it was fetched without JavaScript) or, for a topic answered with a row of brands
 * or kinds, `options[] {name, price, link, thumbnail}`.
 *
 * The block is known by its heading, in the one interface language the fixture pages show it in (English); its
 * topics are the accordion items (`g-accordion-expander`) under that heading.
 */
export const buyingGuide = (root: HTMLElement): Item | undefined => {
  const found = guideBlock(root);
  if (!found) return undefined;
  const { heading, items } = found;
  const partsOf = answerParts(root, items[0] as HTMLElement);
  const images = pageImages(root);
  const topics = items.flatMap((item) => {
    const topic = topicOf(item, partsOf(item), images);
    return topic ? [topic] : [];
  });
  if (!topics.length) return undefined;
  const title = textOf(heading);
  return { title: title.replace(HEADING, '').trim() || title, topics };
};

/** "Buying guide: <subject>"; what follows the colon is the block's title. */
const HEADING = /^Buying guide\s*:?/i;

/**
 * The block and its heading, found from the accordions up (a tag lookup: most pages have none), so that a page's
 * headings are not all read; each block is looked at once.
 */
const guideBlock = (root: HTMLElement): { heading: HTMLElement; items: HTMLElement[] } | undefined => {
  let block: HTMLElement | null = null;
  for (const accordion of qsa(root, 'g-accordion-expander')) {
    if (block && within(accordion, block)) continue;
    block = closest(accordion, '.MjjYud');
    const heading = block ? qs(block, '[role="heading"][aria-level="2"]') : null;
    if (block && heading && HEADING.test(textOf(heading)))
      return { heading, items: qsa(block, 'g-accordion-expander') };
  }
  return undefined;
};

/** One topic: its header is the accordion's button, the topic's name ("price:") then the line under it. */
const topicOf = (item: HTMLElement, parts: HTMLElement[], images: (id: string) => string | undefined) => {
  const [first, ...rest] = leavesOf(qs(item, '[aria-expanded]') ?? item).map((l) => l.text);
  const name = first?.replace(/\s*[:：]$/, '');
  if (!name) return undefined;
  const summary = rest.join(' ');
  const topic: Item = { topic: name };
  if (summary) topic.summary = summary;
  const options = optionsOf(parts, images);
  if (options.length) topic.options = options;
  else Object.assign(topic, answer(parts, summary, item.doc?.source ?? ''));
  return topic;
};

/**
 * A row of brands or kinds: links to a search for each (`/search?q=Wacom+graphics+tablets`) holding a picture, the
 * name first and the typical price range last ("Typical price:" "$55–$1563").
 */
const optionsOf = (parts: HTMLElement[], images: (id: string) => string | undefined): Item[] =>
  parts.flatMap((part) =>
    qsa(part, 'a[href^="/search?"]').flatMap((a) => {
      if (!qs(a, 'img')) return [];
      const lines = leavesOf(a).map((l) => l.text);
      const name = lines[0];
      if (!name) return [];
      const option: Item = { name };
      const price = lines.length > 1 ? lines.at(-1) : undefined;
      if (price && /\d/.test(price)) option.price = price;
      option.link = unwrapLink(a.getAttribute('href'));
      const thumbnail = thumbnailOf(a, images);
      if (thumbnail) option.thumbnail = thumbnail;
      return [option];
    }),
  );
