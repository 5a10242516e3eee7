import type { AiOverview } from '../../../contracts/result.js';
import { hasClass, spacedText, textOf } from './dom.js';
import { decodeText, type HTMLElement } from './html.js';
import { closest, qs, qsa } from './select.js';

/**
 * The AI overview in both markups that the fixtures show: 2024–25 (`.YzCcne` container, `.WaaZC`/`.rPeykc`
 * paragraphs, `li.LLtSOc` source tray) and 2025–26 (`.mZJni` body with inline text and lists, the same source
 * tray beside it). Text blocks are read structurally (lists, headings, text containers), not by class, because the
 * inner classes changed every few months while the container and the source tray did not.
 */
export const parseAiOverview = (root: HTMLElement, raw = ''): AiOverview | undefined => {
  const container = findContainer(root);
  if (!container) return undefined;
  const text_blocks: Array<Record<string, unknown>> = [];
  const refs = references(container);
  const cite = citations(raw, refs);
  const body = qs(container, '.mZJni');
  // 2024–25: the container also holds the header, a hidden "can't generate" variant and "Learn more"; the answer
  // itself is the run of `.WaaZC` blocks.
  if (body) walk(body, text_blocks, cite);
  else for (const block of qsa(container, '.WaaZC')) walk(block, text_blocks, cite);
  if (text_blocks.length === 0) return undefined;
  return { text_blocks, references: refs };
};

type Cite = (el: HTMLElement) => number[] | undefined;

const refKey = (link: string): string => link.replace(/#.*$/, '').replace(/\/$/, '');

/**
 * Which references a block cites (SerpApi's `reference_indexes`). In the 2025–26 markup each citation chip is a
 * `button.rBl3me` whose `data-icl-uuid` names a payload kept in HTML comments (`<!--Sv6Kpe[["<uuid>",[title,
 * snippet, favicon, site, [source], url…]]]-->`, one comment per cited page). Comments are gone from the document
 * tree, so the payloads are read from the raw page, and each cited URL (without its `#:~:text=` fragment) is
 * matched to the source tray's links. The 2024–25 chips (`.NPrrbc[data-cid]`) point at numeric source ids that
 * the page does not tie to the tray, so blocks in that markup carry no indexes.
 */
const citations = (raw: string, refs: Array<Record<string, unknown>>): Cite => {
  const byUuid = new Map<string, number[]>();
  if (refs.length && raw.includes('data-icl-uuid')) {
    const byLink = new Map<string, number>();
    for (const r of refs) if (typeof r.link === 'string') byLink.set(refKey(r.link), r.index as number);
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
  }
  return (el) => {
    if (!byUuid.size) return undefined;
    const out: number[] = [];
    for (const chip of qsa(el, 'button.rBl3me')) {
      for (const i of byUuid.get(chip.getAttribute('data-icl-uuid') ?? '') ?? []) if (!out.includes(i)) out.push(i);
    }
    return out.length ? out : undefined;
  };
};

const findContainer = (root: HTMLElement): HTMLElement | undefined => {
  const body = qs(root, '.mZJni');
  if (body) {
    let c: HTMLElement = body;
    for (let i = 0; i < 15 && c.parentNode && !qs(c, 'li.LLtSOc'); i++) c = c.parentNode;
    return qs(c, 'li.LLtSOc') ? c : body;
  }
  return qsa(root, '.YzCcne').find((c) => qs(c, '.rPeykc') || qs(c, '.WaaZC'));
};

const BLOCK_TAGS = new Set(['div', 'ul', 'ol', 'p', 'table', 'section', 'li', 'h1', 'h2', 'h3', 'h4']);
const SKIP_CLASSES = ['LLtSOc', 'rBl3me', 'NPrrbc', 'pjBG2e', 'uJ19be'];

const skip = (el: HTMLElement): boolean =>
  el.getAttribute('aria-hidden') === 'true' ||
  el.rawTagName === 'button' ||
  el.rawTagName === 'img' ||
  el.rawTagName === 'svg' ||
  el.getAttribute('role') === 'button' ||
  SKIP_CLASSES.some((c) => hasClass(el, c));

const isTextContainer = (el: HTMLElement): boolean =>
  !el.childNodes.some(
    (c) => c.nodeType === 1 && BLOCK_TAGS.has((c as HTMLElement).rawTagName?.toLowerCase()) && textOf(c as HTMLElement),
  );

/** Buttons, hidden parts and the inline source chips (`.NPrrbc`, `.uJ19be`) are not part of the answer's text. */
const notText = (e: HTMLElement): boolean =>
  e.rawTagName?.toLowerCase() === 'button' ||
  e.getAttribute('role') === 'button' ||
  e.getAttribute('aria-hidden') === 'true' ||
  hasClass(e, 'NPrrbc') ||
  hasClass(e, 'uJ19be');

const cleanText = (el: HTMLElement): string => spacedText(el, notText);

const walk = (el: HTMLElement, out: Array<Record<string, unknown>>, cite: Cite): void => {
  for (const node of el.childNodes) {
    if (node.nodeType !== 1) continue;
    const c = node as HTMLElement;
    if (skip(c)) continue;
    const tag = c.rawTagName?.toLowerCase();
    if (tag === 'ul' || tag === 'ol') {
      if (qs(c, 'li.LLtSOc')) continue;
      // Items may sit in `display: contents` wrappers (2026): every `li` whose nearest list is this one.
      const list = qsa(c, 'li')
        .filter((li) => li.parentNode && closest(li.parentNode, 'ul, ol') === c)
        .map((li) => listItem(li, cite))
        .filter((i) => i.snippet || i.title);
      if (list.length) out.push({ type: 'list', list });
      continue;
    }
    if (!textOf(c)) continue;
    if (isTextContainer(c) || /^h[1-4]$/.test(tag ?? '')) {
      const text = cleanText(c);
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
    walk(c, out, cite);
  }
};

const listItem = (li: HTMLElement, cite: Cite): Record<string, unknown> => {
  const text = cleanText(li);
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

const references = (container: HTMLElement): Array<Record<string, unknown>> => {
  const out: Array<Record<string, unknown>> = [];
  const seen = new Set<string>();
  for (const li of qsa(container, 'li.LLtSOc')) {
    const a = qs(li, 'a.KEVENd') ?? qs(li, 'a[href]');
    const link = a?.getAttribute('href');
    if (!link || seen.has(link)) continue;
    seen.add(link);
    const ref: Record<string, unknown> = { index: out.length, link };
    const title = a?.getAttribute('aria-label') || textOf(qs(li, '.mNme1d'));
    if (title) ref.title = title;
    const snippet = textOf(qs(li, '.gxZfx'));
    if (snippet) ref.snippet = snippet;
    const source = textOf(qs(li, '.R8BTeb'));
    if (source) ref.source = source;
    out.push(ref);
  }
  return out;
};
