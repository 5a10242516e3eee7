import type { AiOverview } from '../contracts/result.js';
import { type Cite, citations, hiddenList, legacyChips } from './aiOverviewCitations.js';
import { closest, type HTMLElement, hasClass, qs, qsa, spacedText, textOf } from './dom/index.js';
import { recordSource } from './sources.js';

/**
 * The AI overview in both markups that the fixtures show: 2024–25 (`.YzCcne` container, `.WaaZC`/`.rPeykc`
 * paragraphs, `li.LLtSOc` source tray) and 2025–26 (`.mZJni` body with inline text and lists, the same source
 * tray beside it). Text blocks are read structurally (lists, headings, text containers), not by class, because the
 * inner classes changed every few months while the container and the source tray did not.
 */
export const parseAiOverview = (root: HTMLElement, raw = ''): AiOverview | undefined => {
  const container = findContainer(root);
  const overview = container ? readOverview(root, container, raw, HIDDEN_IS_NOT_TEXT) : undefined;
  return overview ? recordSource(overview, container) : undefined;
};

/**
 * An AI-written "People also ask" answer: the item holds a whole overview in the 2024–25 markup (`.YzCcne`, `.WaaZC`
 * blocks, its own `li.LLtSOc` tray where it has sources). The item is collapsed: what "Show more" reveals is hidden
 * and marked `ahbak`, and is part of the answer; the video carousel among the blocks is not text. `item` is the
 * rendered item (2026) or, on a page fetched without JavaScript (2025), the deferred fragment that holds the
 * overview (`deferred`); `raw` is the page's own text, where the chips' models and the scripts that fill the
 * overview are. Such an overview shows no tray: its whole source list is deferred one level further down, and is
 * read as the page's own overview's hidden list is (`hiddenList`). A rendered item has none to look for.
 */
export const answerOverview = (item: HTMLElement, raw = '', deferred = false): AiOverview | undefined => {
  const container = qsa(item, '.YzCcne').find((c) => qs(c, '.WaaZC'));
  return container ? readOverview(item, container, raw, MARKED_COLLAPSED_IS_TEXT, deferred) : undefined;
};

/**
 * The overview in `container`; `root` bounds where its source lists are looked for in the document. A deferred
 * source list is looked for when the container shows a tray, or always (`deferredList`) for a "People also ask"
 * answer, whose list may be deferred without one.
 */
const readOverview = (
  root: HTMLElement,
  container: HTMLElement,
  raw: string,
  legacyMode: WalkMode,
  deferredList = false,
): AiOverview | undefined => {
  const text_blocks: Array<Record<string, unknown>> = [];
  const tray = references(qsa(container, 'li.LLtSOc'));
  // 2024–25 chips and the overview's full source list (plain HTTP captures hide all but three of its sources).
  const sourced = tray.length > 0 || deferredList;
  const chips = sourced ? legacyChips(container, raw) : { chips: [], near: 0 };
  const list = sourced ? hiddenList(container, raw, tray, chips.near) : undefined;
  const refs = list ? references(list.rest, tray.slice()) : tray.length ? tray : sideSources(container);
  const cite = citations(root, container, raw, refs, chips, list);
  // the container is the answer's body itself when no source tray was found above it (late 2025, en-IT)
  const body = hasClass(container, 'mZJni') ? container : qs(container, '.mZJni');
  // 2025–26 bodies: what sits behind "Show more" is in the page, marked aria-hidden until expanded: it is part of the
  // answer. 2024–25: the container also holds the header, a hidden "can't generate" variant and "Learn more"; the
  // answer itself is the run of `.WaaZC` blocks, and aria-hidden there means not shown (`legacyMode` says otherwise
  // for a "People also ask" answer).
  if (body) walk(body, text_blocks, cite, COLLAPSED_IS_TEXT);
  else
    for (const block of qsa(container, '.WaaZC'))
      if (!skip(block, legacyMode)) walk(block, text_blocks, cite, legacyMode);
  if (text_blocks.length === 0) return undefined;
  return { text_blocks, references: refs };
};

const findContainer = (root: HTMLElement): HTMLElement | undefined => {
  const body = qs(root, '.mZJni');
  if (body) {
    let c: HTMLElement = body;
    for (let i = 0; i < 15 && c.parentNode && !qs(c, 'li.LLtSOc'); i++) c = c.parentNode;
    return qs(c, 'li.LLtSOc') ? c : body;
  }
  // A "People also ask" item can hold an overview of its own (2026): that is the item's answer, not the page's.
  return qsa(root, '.YzCcne').find(
    (c) => (qs(c, '.rPeykc') || qs(c, '.WaaZC')) && !closest(c, '.related-question-pair'),
  );
};

const BLOCK_TAGS = new Set(['div', 'ul', 'ol', 'p', 'table', 'section', 'li', 'h1', 'h2', 'h3', 'h4']);
const SKIP_CLASSES = ['LLtSOc', 'rBl3me', 'NPrrbc', 'pjBG2e', 'uJ19be'];

/** Which aria-hidden parts of the walked block are text (collapsed behind "Show more") rather than not shown. */
interface WalkMode {
  hiddenIsText: (el: HTMLElement) => boolean;
  /** What `cleanText` leaves out: buttons, chips and the hidden parts that are not text. */
  notText: (el: HTMLElement) => boolean;
}
/** Buttons, hidden parts and the inline source chips (`.NPrrbc`, `.uJ19be`) are not part of the answer's text. */
const isControl = (e: HTMLElement): boolean =>
  e.rawTagName?.toLowerCase() === 'button' ||
  e.getAttribute('role') === 'button' ||
  hasClass(e, 'NPrrbc') ||
  hasClass(e, 'uJ19be');
const walkMode = (hiddenIsText: (el: HTMLElement) => boolean): WalkMode => ({
  hiddenIsText,
  notText: (e) => (e.getAttribute('aria-hidden') === 'true' ? !hiddenIsText(e) : isControl(e)),
});
const COLLAPSED_IS_TEXT = walkMode(() => true);
const HIDDEN_IS_NOT_TEXT = walkMode(() => false);
/** 2026 "People also ask" answers: Google marks what "Show more" reveals with `ahbak`; other hidden parts are not shown. */
const MARKED_COLLAPSED_IS_TEXT = walkMode((el) => el.getAttribute('ahbak') === 'true');

/**
 * A carousel (`role="list"` of cards: the videos an answer shows) and a card (a link wrapping blocks) are media, not
 * text; answer lists are `ul`/`ol`, and links in the text sit inside its text containers.
 */
const skip = (el: HTMLElement, mode: WalkMode): boolean =>
  (el.getAttribute('aria-hidden') === 'true' && !mode.hiddenIsText(el)) ||
  el.rawTagName === 'button' ||
  el.rawTagName === 'img' ||
  el.rawTagName === 'svg' ||
  el.getAttribute('role') === 'button' ||
  el.getAttribute('role') === 'list' ||
  (el.rawTagName === 'a' && !isTextContainer(el)) ||
  SKIP_CLASSES.some((c) => hasClass(el, c));

const isTextContainer = (el: HTMLElement): boolean =>
  !el.childNodes.some((c) => c.nodeType === 1 && isBlock(c as HTMLElement) && textOf(c as HTMLElement));

/** A block of the answer, or a card: a link wrapping blocks (`skip` leaves it out), never a link in a sentence. */
const isBlock = (el: HTMLElement): boolean => {
  const tag = el.rawTagName?.toLowerCase();
  return BLOCK_TAGS.has(tag) || (tag === 'a' && !isTextContainer(el));
};

const cleanText = (el: HTMLElement, mode: WalkMode): string => spacedText(el, mode.notText);

const walk = (el: HTMLElement, out: Array<Record<string, unknown>>, cite: Cite, mode: WalkMode): void => {
  for (const node of el.childNodes) {
    if (node.nodeType !== 1) continue;
    const c = node as HTMLElement;
    if (skip(c, mode)) continue;
    const tag = c.rawTagName?.toLowerCase();
    if (tag === 'ul' || tag === 'ol') {
      if (qs(c, 'li.LLtSOc')) continue;
      // Items may sit in `display: contents` wrappers (2026): every `li` whose nearest list is this one.
      const list = qsa(c, 'li')
        .filter((li) => li.parentNode && closest(li.parentNode, 'ul, ol') === c)
        .filter((li) => li.getAttribute('aria-hidden') !== 'true' || mode.hiddenIsText(li))
        .map((li) => listItem(li, cite, mode))
        .filter((i) => i.snippet || i.title);
      if (list.length) out.push({ type: 'list', list });
      continue;
    }
    if (!textOf(c)) continue;
    if (isTextContainer(c) || /^h[1-4]$/.test(tag ?? '')) {
      const text = cleanText(c, mode);
      if (!text) continue;
      const heading = qs(c, '[role="heading"]') ?? (c.getAttribute('role') === 'heading' ? c : null);
      if (/^h[1-4]$/.test(tag ?? '') || (heading && textOf(heading) === text))
        out.push({ type: 'heading', snippet: text });
      else {
        const reference_indexes = cite(c);
        out.push({ type: 'paragraph', snippet: text, ...(reference_indexes ? { reference_indexes } : {}) });
      }
      continue;
    }
    walk(c, out, cite, mode);
  }
};

const listItem = (li: HTMLElement, cite: Cite, mode: WalkMode): Record<string, unknown> => {
  const text = cleanText(li, mode);
  const strong = textOf(qs(li, 'strong'));
  const reference_indexes = cite(li);
  const refs = reference_indexes ? { reference_indexes } : {};
  if (strong && text.startsWith(strong) && text.length > strong.length) {
    return {
      title: strong.replace(/[:：]\s*$/, ''),
      snippet: text.slice(strong.length).replace(/^[\s:：]+/, ''),
      ...refs,
    };
  }
  return { snippet: text, ...refs };
};

/**
 * Late 2025: no `li.LLtSOc` tray; the sources sit beside the answer body in a list of `li.CyMdWb` (all of them) and a
 * visible tray of `li.jydCyd` (the first three), each an `a.NDNGvf` named by its aria-label, with the title in
 * `.Nn35F`, the snippet in `.vhJ6Pe` and the site in `.R0r5R`. Looked for a few levels above the body only, so a
 * results list elsewhere on the page is never taken for them.
 */
const sideSources = (container: HTMLElement): Array<Record<string, unknown>> => {
  let scope: HTMLElement = container;
  for (let i = 0; i < 6 && scope.parentNode; i++) {
    scope = scope.parentNode;
    const items = qsa(scope, 'li.CyMdWb');
    const list = items.length ? items : qsa(scope, 'li.jydCyd');
    if (list.length) return references(list, [], SIDE_LIST);
  }
  return [];
};

/** Where a source item keeps its link, title, snippet and site name, in each markup. */
interface SourceMarkup {
  link: string;
  /** the title: the element's text first, or the link's aria-label first */
  title: string;
  labelFirst: boolean;
  snippet: string;
  source: string;
}
const TRAY: SourceMarkup = {
  link: 'a.KEVENd',
  title: '.mNme1d',
  labelFirst: true,
  snippet: '.gxZfx',
  source: '.R8BTeb',
};
const SIDE_LIST: SourceMarkup = {
  link: 'a.NDNGvf',
  title: '.Nn35F',
  labelFirst: false,
  snippet: '.vhJ6Pe',
  source: '.R0r5R',
};

/**
 * The sources of `items` (`li.LLtSOc` by default), in order, each http(s) link once, after those already in `out`
 * (whose links count as seen and whose indexes continue).
 */
const references = (
  items: HTMLElement[],
  out: Array<Record<string, unknown>> = [],
  markup: SourceMarkup = TRAY,
): Array<Record<string, unknown>> => {
  const seen = new Set(out.map((r) => r.link));
  for (const li of items) {
    const a = qs(li, markup.link) ?? qs(li, 'a[href]');
    const link = a?.getAttribute('href');
    if (!link || seen.has(link) || !/^https?:/.test(link)) continue;
    seen.add(link);
    const ref: Record<string, unknown> = { index: out.length, link };
    const label = a?.getAttribute('aria-label');
    const named = textOf(qs(li, markup.title));
    const title = markup.labelFirst ? label || named : named || label;
    if (title) ref.title = title;
    const snippet = textOf(qs(li, markup.snippet));
    if (snippet) ref.snippet = snippet;
    const source = textOf(qs(li, markup.source));
    if (source) ref.source = source;
    out.push(ref);
  }
  return out;
};
