import type { AiOverview } from '../contracts/result.js';
import { callBefore, fragmentOf, unescapeJs } from './deferred.js';
import {
  closest,
  decodeAttribute,
  decodeText,
  type HTMLElement,
  hasClass,
  qs,
  qsa,
  spacedText,
  textOf,
} from './dom/index.js';

/**
 * The AI overview in both markups that the fixtures show: 2024–25 (`.YzCcne` container, `.WaaZC`/`.rPeykc`
 * paragraphs, `li.LLtSOc` source tray) and 2025–26 (`.mZJni` body with inline text and lists, the same source
 * tray beside it). Text blocks are read structurally (lists, headings, text containers), not by class, because the
 * inner classes changed every few months while the container and the source tray did not.
 */
export const parseAiOverview = (root: HTMLElement, raw = ''): AiOverview | undefined => {
  const container = findContainer(root);
  return container ? readOverview(root, container, raw, HIDDEN_IS_NOT_TEXT) : undefined;
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

type Cite = (el: HTMLElement) => number[] | undefined;

const refKey = (link: string): string => link.replace(/#.*$/, '').replace(/\/$/, '');

/**
 * Which references a block cites (SerpApi's `reference_indexes`): the sources of the citation chips that support
 * the block, each source found in the references by its URL (without the `#:~:text=` fragment). Both markups say
 * it in their own way (`iclCitations`, `huuidCitations`); a cited source that is not in the references is left out.
 */
const citations = (
  root: HTMLElement,
  container: HTMLElement,
  raw: string,
  refs: Array<Record<string, unknown>>,
  chips: LegacyChips,
  list: SourceList | undefined,
): Cite => {
  const byLink = new Map<string, number>();
  for (const r of refs) if (typeof r.link === 'string') byLink.set(refKey(r.link), r.index as number);
  const byUuid = byLink.size ? iclCitations(container, raw, byLink) : new Map<string, number[]>();
  const bySentence = byLink.size ? huuidCitations(root, raw, byLink, chips, list) : new Map<string, number[]>();
  if (!byUuid.size && !bySentence.size) return () => undefined;
  return (el) => {
    const out: number[] = [];
    const add = (list: number[] | undefined) => {
      for (const i of list ?? []) if (!out.includes(i)) out.push(i);
    };
    if (byUuid.size)
      for (const chip of qsa(el, 'button.rBl3me')) add(byUuid.get(chip.getAttribute('data-icl-uuid') ?? ''));
    if (bySentence.size)
      for (const s of qsa(el, 'span[data-huuid]')) add(bySentence.get(s.getAttribute('data-huuid') ?? ''));
    return out.length ? out : undefined;
  };
};

/**
 * 2025–26: each chip is a `button.rBl3me` whose `data-icl-uuid` names a payload kept in HTML comments
 * (`<!--Sv6Kpe[["<uuid>",[title, snippet, favicon, site, [source], url…]]]-->`, one comment per cited page).
 * Comments are gone from the document tree, so the payloads are read from the raw page, and only when the overview
 * has such chips: a scan of the raw page costs more than the rest of the overview.
 */
const iclCitations = (container: HTMLElement, raw: string, byLink: Map<string, number>): Map<string, number[]> => {
  const byUuid = new Map<string, number[]>();
  if (!qs(container, 'button.rBl3me[data-icl-uuid]')) return byUuid;
  const payload = /<!--Sv6Kpe(\[\[&quot;[0-9a-f-]{36}&quot;,\[[\s\S]*?)-->/g;
  for (let m = payload.exec(raw); m; m = payload.exec(raw)) {
    let data: unknown;
    try {
      data = JSON.parse(decodeText(m[1] as string));
    } catch {
      continue;
    }
    if (!Array.isArray(data)) continue;
    for (const entry of data) {
      if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !Array.isArray(entry[1])) continue;
      for (const v of entry[1]) {
        const index = typeof v === 'string' && /^https?:/.test(v) ? byLink.get(refKey(v)) : undefined;
        if (index === undefined) continue;
        const list = byUuid.get(entry[0]) ?? [];
        if (!list.includes(index)) list.push(index);
        byUuid.set(entry[0], list);
      }
    }
  }
  return byUuid;
};

/**
 * 2024–25 (the 2025-02 captures; also the inline answers of the 2026-01 ones): sentence id (`span[data-huuid]`) ->
 * the references its chips cite. The page ties them through its own data binding (barclays-job-cuts as the example):
 * - a chip `div.NPrrbc` has `data-cid`, a uuid ("5c74d515-…"), and `data-uuids`, the sentences it supports
 *   ("7569144374026847024,7569144374026848091": the `data-huuid` spans before it; a chip on a heading lists the
 *   items under it). The chip names no source: its label is "View related links", with no link and no favicon.
 * - beside it, `<div jscontroller="g4PEk" jsdata="ZtRa8d;_;ApyHlo">` binds it to the W_jd model
 *   `"ApyHlo":["5c74d515-…",[93540,433540,53617]]` (inline JSON, or `window['W_jd']['ApyHlo']=…`): source ids.
 * - the overview's full source list, a hidden `<div jscontroller="g4PEk" jsdata="P58Gu;_;ApyHl0">` (in a plain
 *   HTTP capture only inside a `jsl.dh` script string; the visible tray shows its first three), has the model
 *   `[[93540,433540,133540,53540,1073540,53617,43617],[]]` and one `li.LLtSOc` per id, in that order: seven and
 *   seven here, equal counts in all twelve such lists in the fixtures. No tray item or source payload carries the
 *   numeric id, so the order is the tie, and the tray confirms it: on my-work-is-done, "In his final two years, he
 *   was in severe pain." cites 19760, item 0, George Eastman - Wikipedia ("In his final two years, Eastman was in
 *   intense pain…"); "Eastman was diagnosed with a progressive spinal disease in the late 1920s." cites 79760,
 *   item 2, eastman.org ("In the late 1920s, Eastman was diagnosed with a progressive…"). Shifted by one, neither
 *   would match.
 * Anything missing (a model absent, as on the truncated pt-BR capture, or counts that differ) gives no indexes.
 */
const huuidCitations = (
  root: HTMLElement,
  raw: string,
  byLink: Map<string, number>,
  { chips, near }: LegacyChips,
  list: SourceList | undefined,
): Map<string, number[]> => {
  const bySentence = new Map<string, number[]>();
  if (!chips.length) return bySentence;
  const links = sourceLinks(root, raw, [...new Set(chips.flatMap((c) => c.sources))], near, list);
  if (!links) return bySentence;
  for (const { sources, sentences } of chips) {
    const indexes: number[] = [];
    for (const id of sources) {
      const index = byLink.get(refKey(links.get(id) ?? ''));
      if (index !== undefined && !indexes.includes(index)) indexes.push(index);
    }
    if (indexes.length) for (const s of sentences) bySentence.set(s, [...(bySentence.get(s) ?? []), ...indexes]);
  }
  return bySentence;
};

interface LegacyChips {
  chips: Array<{ sources: number[]; sentences: string[] }>;
  /** Where the last chip model was found: the source lists' models sit there too, their scripts after it. */
  near: number;
}

/** The 2024–25 chips (`div.NPrrbc`) of the overview, each with its source ids and the sentences it supports. */
const legacyChips = (container: HTMLElement, raw: string): LegacyChips => {
  const chips: LegacyChips['chips'] = [];
  // The models sit together in chip order, so each search starts where the previous model was found.
  let near = 0;
  for (const chip of qsa(container, '.NPrrbc[data-cid]')) {
    const found = chipSources(raw, chip.getAttribute('data-cid') ?? '', near);
    const sentences = chip.getAttribute('data-uuids')?.split(',') ?? [];
    if (!found || !sentences.length) continue;
    near = found.at;
    chips.push({ sources: found.sources, sentences });
  }
  return { chips, near };
};

/** Where `needle` is: from `near` on, else before it. A long page makes every search count (~0.1 ms each). */
const findNear = (raw: string, needle: string, near: number): number => {
  const at = raw.indexOf(needle, near);
  return at >= 0 || near === 0 ? at : raw.lastIndexOf(needle, near);
};

const NUMBERS = /\[([\d,]*)\]/y;

/** The number list `[1,2,3]` that starts at `at`. */
const numbersAt = (raw: string, at: number): number[] | undefined => {
  NUMBERS.lastIndex = at;
  const m = NUMBERS.exec(raw);
  return m ? (m[1] as string).split(',').filter(Boolean).map(Number) : undefined;
};

/** A chip's source ids: its model `["<cid>",[ids]]`, the only place where the cid is followed by a list. */
const chipSources = (raw: string, cid: string, near: number): { sources: number[]; at: number } | undefined => {
  if (!/^[0-9a-f-]{36}$/.test(cid)) return undefined;
  const needle = `"${cid}",[`;
  const at = findNear(raw, needle, near);
  const sources = at < 0 ? undefined : numbersAt(raw, at + needle.length - 1);
  return sources ? { sources, at } : undefined;
};

/** A source list's ids: its model `[[ids],[]]`, as inline JSON (`"K":`) or a W_jd assignment (`['K']=`). */
const listSources = (raw: string, key: string, near: number): number[] | undefined => {
  for (const needle of [`"${key}":[`, `['${key}']=[`]) {
    const at = findNear(raw, needle, near);
    if (at >= 0) return numbersAt(raw, at + needle.length);
  }
  return undefined;
};

/** `jsdata="P58Gu;_;` inside a `jsl.dh('id','…')` string, where a plain HTTP capture keeps the source list. */
const LIST_IN_SCRIPT = 'jsdata\\x3d\\x22P58Gu;_;';

/** Where `jsdata="P58Gu;_;` is in script strings: from `near` to the end, then before `near`. */
function* listsInScripts(raw: string, near: number): Generator<number> {
  for (const [from, until] of [
    [near, raw.length],
    [0, near],
  ] as const) {
    for (let at = raw.indexOf(LIST_IN_SCRIPT, from); at >= 0 && at < until; at = raw.indexOf(LIST_IN_SCRIPT, at + 1))
      yield at;
  }
}

/**
 * Source id -> URL, from the source list (`P58Gu`) whose ids include every cited one: a page can hold several
 * ("People also ask" answers have their own), each with its own ids. The overview's own list (`hiddenList`) comes
 * first, then lists in the document; in a plain HTTP capture they are in scripts after the models, so that search
 * starts at the models.
 */
const sourceLinks = (
  root: HTMLElement,
  raw: string,
  cited: number[],
  near: number,
  list: SourceList | undefined,
): Map<number, string> | undefined => {
  const pair = (ids: number[], links: string[] | undefined) =>
    links && links.length === ids.length ? new Map(ids.map((id, i) => [id, links[i] as string])) : undefined;
  if (list && cited.every((id) => list.ids.includes(id))) return pair(list.ids, list.links);
  const seen = new Set<string>();
  const fits = (key: string): number[] | undefined => {
    if (!key || seen.has(key)) return undefined;
    seen.add(key);
    const ids = listSources(raw, key, near);
    return ids && cited.every((id) => ids.includes(id)) ? ids : undefined;
  };
  for (const dom of qsa(root, '[jsdata^="P58Gu;_;"]')) {
    const ids = fits(dom.getAttribute('jsdata')?.slice(8) ?? '');
    if (ids) return pair(ids, domLinks(dom));
  }
  for (const at of listsInScripts(raw, near)) {
    const start = at + LIST_IN_SCRIPT.length;
    const ids = fits(listKey(raw, at));
    if (ids) return pair(ids, scriptLinks(raw, start));
  }
  return undefined;
};

/** The model key of the list whose `jsdata\x3d\x22P58Gu;_;` is at `at`. */
const listKey = (raw: string, at: number): string => {
  const start = at + LIST_IN_SCRIPT.length;
  return /^[\w-]+/.exec(raw.slice(start, start + 64))?.[0] ?? '';
};

const domLinks = (list: HTMLElement): string[] | undefined => {
  const links = qsa(list, 'li.LLtSOc').map((li) => (qs(li, 'a.KEVENd') ?? qs(li, 'a[href]'))?.getAttribute('href'));
  return links.every((l): l is string => !!l) ? links : undefined;
};

/**
 * The item links of a list inserted by `jsl.dh('id','…')`: the rest of that string, read as it is escaped
 * (`\x3cli `, `\x3d\x22`); only the links are unescaped, the whole string would take a tenth of a millisecond.
 */
const scriptLinks = (raw: string, at: number): string[] | undefined => {
  const end = raw.indexOf("');", at);
  if (end < 0) return undefined;
  const links: string[] = [];
  for (const item of raw.slice(at, end).split('\\x3cli ').slice(1)) {
    const classes = /^(.*?)\\x3e/
      .exec(item)?.[1]
      ?.match(/class\\x3d\\x22(.*?)\\x22/)?.[1]
      ?.split(' ');
    if (!classes?.includes('LLtSOc')) continue;
    const a = /\\x3ca (.*?)\\x3e/.exec(item)?.[1];
    const href = a && /(?:^| )href\\x3d\\x22(.*?)\\x22/.exec(a)?.[1];
    const link = href && unescapeJs(href);
    if (!link) return undefined;
    links.push(decodeAttribute(link));
  }
  return links;
};

/** The overview's full source list: its model's ids, each item's link, and the items after the tray. */
interface SourceList {
  ids: number[];
  links: string[];
  rest: HTMLElement[];
}

/**
 * 2024–25 plain HTTP captures: the overview's full source list, of which the visible tray shows the first three.
 * It is the hidden `P58Gu` list inserted by a `jsl.dh('<id>','…')` script string into an element of the overview
 * itself (an empty `<div id="_PCalZ8qYDtrb2roPvab1EA_70">` after the answer in the barclays container; the lists of
 * "People also ask" answers go into elements of their own). The string is unescaped as JavaScript reads it,
 * parsed as a fragment (deferred.ts), and its items are read as the tray's are. It counts only if its model
 * `[[ids],[]]` names as many ids as it has items, every item has a link and the tray is its beginning, link for
 * link; anything else (the string not closed or badly escaped, a model missing) gives undefined: the tray alone, as
 * before.
 * A rendered capture, or a 2025–26 page, has the overview's list in the document inside the overview, where the
 * tray is read from: nothing to add.
 * Cost: ~0.1 ms each to unescape and to parse barclays' 30 kB string (seven items), paid back in part: the search
 * starts at the chip models, and `sourceLinks` then takes this list's ids and links instead of searching the page
 * and reading them from the script again.
 */
const hiddenList = (
  container: HTMLElement,
  raw: string,
  tray: Array<Record<string, unknown>>,
  near: number,
): SourceList | undefined => {
  const doc = container.doc;
  if (!doc || !raw || qs(container, '[jsdata^="P58Gu;_;"]')) return undefined;
  const inOverview = (id: string): boolean => {
    for (let e = doc.byId.get(id)?.[0] ?? null; e; e = e.parentNode) if (e === container) return true;
    return false;
  };
  for (const at of listsInScripts(raw, near)) {
    const call = callBefore(raw, at);
    if (!call || !inOverview(call.id)) continue;
    const key = listKey(raw, at);
    const ids = key && call.end > at ? listSources(raw, key, near) : undefined;
    const fragment = ids && fragmentOf(raw, call);
    if (!ids || !fragment) return undefined;
    const list = qsa(fragment, '[jsdata^="P58Gu;_;"]').find((l) => l.getAttribute('jsdata') === `P58Gu;_;${key}`);
    const links = list && domLinks(list);
    if (!list || !links || links.length !== ids.length || links.length <= tray.length) return undefined;
    if (tray.some((r, i) => r.link !== links[i])) return undefined;
    return { ids, links, rest: qsa(list, 'li.LLtSOc').slice(tray.length) };
  }
  return undefined;
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
