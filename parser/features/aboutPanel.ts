import { closest, type HTMLElement, qs, qsa, textOf } from '../dom/index.js';
import { isGoogleInternal, unwrapLink } from '../links.js';
import { leavesOf } from './blockCards.js';

type Panel = Record<string, unknown>;

/**
 * The knowledge panel Google renders in the results column on 2025 pages that have no right-hand panel: a block
 * headed "About Tesla" holding a row of cards (`role="listitem"`) that describe the entity, the first from an
 * encyclopedia ("From Wikipedia"), then the entity's own words and other sites, and closed by a link "More about
 * Tesla" into Google's about-this-source search (`tbm=ilp`). That link is the marker: it does not depend on the
 * interface language, and no other block carries it. Reported as SerpApi's `knowledge_graph`: `title` (the entity's
 * name), `description` and `source` (the first card's text, and the name and page of the site it quotes). The block
 * holds no type and no facts, so none are reported.
 */
export const aboutPanel = (root: HTMLElement): Panel | undefined => {
  for (const more of qsa(root, 'a[href*="tbm=ilp"]')) {
    const block = closest(more, '.MjjYud');
    const heading = textOf(qs(block, '[role="heading"][aria-level="2"]'));
    if (!block || !heading) continue;
    const kg: Panel = { title: entityName(heading, textOf(more)) };
    const card = qsa(block, '[role="listitem"]').find((item) => outsideLink(item));
    if (card) readCard(kg, card);
    return kg;
  }
  return undefined;
};

/**
 * The entity's name: what the heading ("About Tesla") and the closing link ("More about Tesla") end with, from a
 * word's start, whatever the interface language words around it. When they share no whole word, the heading.
 */
const entityName = (heading: string, more: string): string => {
  let n = 0;
  while (n < heading.length && n < more.length && heading.at(-1 - n) === more.at(-1 - n)) n++;
  if (n === heading.length) return heading;
  const shared = heading.slice(heading.length - n);
  const space = shared.search(/\s/);
  const name = space < 0 ? '' : shared.slice(space).trim();
  return name || heading;
};

const outsideLink = (card: HTMLElement): string | undefined => {
  for (const a of qsa(card, 'a[href]')) {
    const link = unwrapLink(a.getAttribute('href'));
    if (link && /^https?:\/\//.test(link) && !isGoogleInternal(link)) return link;
  }
  return undefined;
};

/**
 * The first card: its label (a `role="heading"`: "From Wikipedia"), the quoted text (its longest other line, whole
 * where words in it are marked up) and the name of the site last. The card links to the quoted page.
 */
const readCard = (kg: Panel, card: HTMLElement): void => {
  const label = textOf(qs(card, '[role="heading"]'));
  const lines = leavesOf(card).filter((l) => l.text !== label);
  const longest = lines.reduce<(typeof lines)[number] | undefined>(
    (a, b) => (!a || b.text.length > a.text.length ? b : a),
    undefined,
  );
  if (!longest) return;
  const whole = textOf(longest.el);
  const description = label && whole.includes(label) ? longest.text : whole;
  kg.description = description;
  const name = lines.at(-1)?.text;
  const link = outsideLink(card);
  if (name && name !== description && link) kg.source = { name, link };
};
