import { answerOverview } from '../aiOverview.js';
import { deferredFragments, isEmpty } from '../deferred.js';
import { closest, type HTMLElement, qs, qsa, textOf } from '../dom/index.js';
import { isGoogleInternal, unwrapLink } from '../links.js';
import { recordSource } from '../sources.js';

type Question = Record<string, unknown>;

/**
 * People also ask: `div.related-question-pair` from 2020 to 2026. The question is in `data-q` where Google sets
 * it (2023–26); otherwise the first heading-like text. The answer is read from the item, or on a page fetched
 * without running JavaScript from the deferred fragments that would fill it (`answerParts`).
 */
export const relatedQuestions = (root: HTMLElement): Question[] | undefined => {
  const pairs = qsa(root, '.related-question-pair');
  if (!pairs.length) return undefined;
  const partsOf = answerParts(root, pairs[0] as HTMLElement);
  const raw = root.doc?.source ?? '';
  const out: Question[] = [];
  const seen = new Set<string>();
  for (const pair of pairs) {
    const question =
      pair.getAttribute('data-q') ??
      (textOf(qs(pair, '[role="heading"]')) ||
        textOf(qs(pair, '.CSkcDe')) ||
        textOf(qs(pair, '[role="button"]')) ||
        textOf(qs(pair, 'span')));
    if (!question || seen.has(question)) continue;
    seen.add(question);
    const parts = partsOf(pair);
    let found = answer(parts, question, raw);
    // Nothing in two levels of a served page: an AI-written answer (2025), one level further down.
    if (Object.keys(found).length === 0 && parts[0] !== pair) found = answer(partsOf(pair, 3), question, raw);
    out.push(recordSource({ question, ...found }, pair));
  }
  return out.length ? out : undefined;
};

/**
 * Where an item's answer is: the fragments that would fill the item, in the order a browser inserts them, or the
 * item itself when nothing of it is deferred.
 * In a page fetched without running JavaScript the item holds its question and an empty element
 * (`<div id="_4vzwZf3kHrih5NoP4bSC0A4_31">`) that a `jsl.dh('<id>','…')` script fills (deferred.ts). That
 * fragment is a frame with one such element per block (2023–25: the answer text, its source) or the blocks
 * themselves (2020–21), so the fragments of the frame's elements are read too: two `levels`. A third level exists
 * only under AI-written answers (2025: an overview inside a frame inside the frame, with its own source list one
 * level further down, which the overview's reader finds itself). It is the largest fragment of a page (~25 kB
 * each on problems-with-bible-translations), and its elements are not filled on other pages (a lookup that misses
 * reads to the end of the page), so it is asked for (`levels` 3) only for an item with nothing in two.
 * A rendered page (2026 captures, browser saves) holds what the scripts add; its empty elements are placeholders
 * no call fills (the page keeps its scripts, but their targets are filled). In a page as served, the first empty
 * element of an item is always filled by a call, so until one call is found, a lookup that finds none means the
 * page is rendered or saved without its scripts: no further lookup is made (each would read to the end of the page).
 */
export const answerParts = (
  root: HTMLElement,
  first: HTMLElement,
): ((pair: HTMLElement, levels?: number) => HTMLElement[]) => {
  const raw = root.doc?.source ?? '';
  let fragmentFor: ((id: string) => HTMLElement | undefined) | undefined;
  let served = false;
  let rendered = !raw;
  return (pair, levels = 2) => {
    const parts: HTMLElement[] = [];
    const follow = (scope: HTMLElement, level: number): void => {
      for (const el of emptyWithId(scope)) {
        if (rendered) return;
        fragmentFor ??= deferredFragments(raw, first.attrsStart);
        const fragment = fragmentFor(el.id);
        if (!fragment) {
          rendered = !served;
          continue;
        }
        served = true;
        parts.push(fragment);
        if (level < levels) follow(fragment, level + 1);
      }
    };
    follow(pair, 1);
    // An item whose answer is deferred holds only its question.
    return parts.length ? parts : [pair];
  };
};

/** The elements under `scope` that have an id and nothing in them: the elements a fragment fills. */
const emptyWithId = (scope: HTMLElement): HTMLElement[] => {
  const all = scope.doc?.all;
  if (!all) return [];
  const out: HTMLElement[] = [];
  for (let i = scope.order + 1; i <= scope.end; i++) {
    const el = all[i] as HTMLElement;
    if (el.id && isEmpty(el)) out.push(el);
  }
  return out;
};

/** The first element matching `selector` in the first part that has one. */
const find = (parts: HTMLElement[], selector: string): HTMLElement | null => findIn(parts, selector)?.el ?? null;

/** `find`, with the part it was found in. */
const findIn = (parts: HTMLElement[], selector: string): { el: HTMLElement; part: HTMLElement } | undefined => {
  for (const part of parts) {
    const el = qs(part, selector);
    if (el) return { el, part };
  }
  return undefined;
};

/**
 * A table answer (2021 mobile "What is the price of a .com domain?"): Google's own readable class for it, so tables
 * elsewhere in an item (an AI-written answer's, a source's rich snippet) are not taken for one.
 */
const TABLE = '.webanswers-webanswers_table__webanswers-table table';

/** Dates beside the answer: under a text answer (`.kX21rb`, 2020–25), a list (`.Od5Jsd`) or a table (`.xzrguc`). */
const DATE = '.kX21rb, .Od5Jsd, .xzrguc';

/**
 * The answer as SerpApi names it, read as the answer box of a results page is: the snippet (`.hgKElc`, else the
 * description block), a list (`li.TrT0Xe` in `ol.X5LH0c`/`ul.i8Z77e`, 2020–25) or a table, the date shown with it,
 * and the source result (title, link, displayed link). A list or table answer has no snippet text; its heading
 * ("America's 15 best pizzas") is the text Google shows above it. An AI-written answer has none of these
 * (`aiAnswer`).
 */
export const answer = (parts: HTMLElement[], question: string, raw: string): Question => {
  const ai = aiAnswer(parts, raw);
  if (ai) return ai;
  const q: Question = {};
  const text = find(parts, '.hgKElc') ?? find(parts, '[data-attrid="wa:/description"]') ?? find(parts, '.VwiC3b');
  let snippet = textOf(text);
  const item = findIn(parts, 'li.TrT0Xe');
  const listEl = item ? closest(item.el, 'ol, ul') : null;
  const list = listEl
    ? qsa(listEl, 'li.TrT0Xe')
        .filter((li) => li.parentNode && closest(li.parentNode, 'ol, ul') === listEl)
        .map((li) => textOf(li))
        .filter(Boolean)
    : [];
  const tableAt = findIn(parts, TABLE);
  const table = tableAt ? rows(tableAt.el) : [];
  if (!snippet) {
    const shown = list.length && listEl && item ? { el: listEl, part: item.part } : table.length ? tableAt : undefined;
    snippet = shown ? textOf(headingBefore(shown.el, shown.part)) : '';
  }
  if (snippet && snippet !== question) q.snippet = snippet;
  if (list.length) q.list = list;
  if (table.length) q.table = table;
  const date = textOf(find(parts, DATE));
  if (date) q.date = date;
  Object.assign(q, source(parts));
  return q;
};

/**
 * An AI-written answer held in the item (2026 rendered pages) or in its third fragment level (2025 pages fetched
 * without JavaScript, `answerParts`), under SerpApi's `type: "ai_overview"` for such an item, with the overview's
 * own shape (`text_blocks`, `references`: its sources where the page lists them). SerpApi names nothing for the
 * answer's text beyond that, so `snippet` is the answer's opening paragraph: what a reader of questions and
 * snippets (the MCP compact view) gets. `raw` is the page's text.
 */
const aiAnswer = (parts: HTMLElement[], raw: string): Question | undefined => {
  const holder = findIn(parts, '.YzCcne')?.part;
  const overview = holder ? answerOverview(holder, raw, holder.doc?.source !== raw) : undefined;
  if (!overview) return undefined;
  const q: Question = { type: 'ai_overview' };
  const opening = overview.text_blocks.find((b) => b.type === 'paragraph')?.snippet;
  if (typeof opening === 'string') q.snippet = opening;
  q.text_blocks = overview.text_blocks;
  if (overview.references.length) q.references = overview.references;
  return q;
};

/** The rows of a table answer, each its cells' text; rows without text are left out. */
const rows = (table: HTMLElement): string[][] =>
  qsa(table, 'tr')
    .map((tr) => qsa(tr, 'th, td').map((c) => textOf(c)))
    .filter((cells) => cells.some(Boolean));

/**
 * The heading nearest above `el` inside `part`: from the closest ancestor up, the last `[role="heading"]` before
 * it (not inside a list or table).
 */
const headingBefore = (el: HTMLElement, part: HTMLElement): HTMLElement | null => {
  for (let p = el.parentNode; p; p = p === part ? null : p.parentNode) {
    const heading = qsa(p, '[role="heading"]')
      .filter((h) => h.order < el.order && !closest(h, 'ol, ul, table'))
      .at(-1);
    if (heading) return heading;
  }
  return null;
};

/** The answer's source: the result under it (`.yuRUbf a`; `a h3` and 2021 mobile's `h3 a` forms). */
const source = (parts: HTMLElement[]): Question => {
  for (const part of parts) {
    const a = qs(part, '.yuRUbf a') ?? closestAnchor(qs(part, 'a[href] h3')) ?? qs(part, 'h3 a[href]');
    if (!a) continue;
    const link = unwrapLink(a.getAttribute('href'));
    // A link back into Google search is not the answer's source; a later part may hold that.
    if (!link || !/^https?:/.test(link) || isGoogleInternal(link)) continue;
    const out: Question = { link };
    const title = textOf(qs(a, 'h3') ?? closest(a, 'h3'));
    if (title) out.title = title;
    const cite = textOf(qs(part, 'cite'));
    if (cite) out.displayed_link = cite;
    return out;
  }
  return {};
};

const closestAnchor = (el: HTMLElement | null): HTMLElement | null => (el ? closest(el, 'a') : null);
