import { callBefore, fragmentOf, unescapeJs } from './deferred.js';
import { decodeAttribute, decodeText, type HTMLElement, qs, qsa } from './dom/index.js';

/**
 * Where the AI overview's text blocks take their references from (aiOverview.ts reads the blocks): the citation
 * chips of each markup, and the overview's full source list, which a plain HTTP capture keeps in its scripts.
 */

/** Which references a block of the overview cites (SerpApi's `reference_indexes`), if any. */
export type Cite = (el: HTMLElement) => number[] | undefined;

const refKey = (link: string): string => link.replace(/#.*$/, '').replace(/\/$/, '');

/**
 * Which references a block cites (SerpApi's `reference_indexes`): the sources of the citation chips that support
 * the block, each source found in the references by its URL (without the `#:~:text=` fragment). Both markups say
 * it in their own way (`iclCitations`, `huuidCitations`); a cited source that is not in the references is left out.
 */
export const citations = (
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

export interface LegacyChips {
  chips: Array<{ sources: number[]; sentences: string[] }>;
  /** Where the last chip model was found: the source lists' models sit there too, their scripts after it. */
  near: number;
}

/** The 2024–25 chips (`div.NPrrbc`) of the overview, each with its source ids and the sentences it supports. */
export const legacyChips = (container: HTMLElement, raw: string): LegacyChips => {
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
export interface SourceList {
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
export const hiddenList = (
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
