import type { AiOverview } from '../../../contracts/result.js';
import { hasClass, spacedText, textOf } from './dom.js';
import type { HTMLElement } from './html.js';
import { qs, qsa } from './select.js';

/**
 * The AI overview in both markups that the fixtures show: 2024–25 (`.YzCcne` container, `.WaaZC`/`.rPeykc`
 * paragraphs, `li.LLtSOc` source tray) and 2025–26 (`.mZJni` body with inline text and lists, the same source
 * tray beside it). Text blocks are read structurally (lists, headings, text containers), not by class, because the
 * inner classes changed every few months while the container and the source tray did not.
 */
export const parseAiOverview = (root: HTMLElement): AiOverview | undefined => {
  const container = findContainer(root);
  if (!container) return undefined;
  const text_blocks: Array<Record<string, unknown>> = [];
  const body = qs(container, '.mZJni');
  // 2024–25: the container also holds the header, a hidden "can't generate" variant and "Learn more"; the answer
  // itself is the run of `.WaaZC` blocks.
  if (body) walk(body, text_blocks);
  else for (const block of qsa(container, '.WaaZC')) walk(block, text_blocks);
  if (text_blocks.length === 0) return undefined;
  return { text_blocks, references: references(container) };
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

const walk = (el: HTMLElement, out: Array<Record<string, unknown>>): void => {
  for (const node of el.childNodes) {
    if (node.nodeType !== 1) continue;
    const c = node as HTMLElement;
    if (skip(c)) continue;
    const tag = c.rawTagName?.toLowerCase();
    if (tag === 'ul' || tag === 'ol') {
      if (qs(c, 'li.LLtSOc')) continue;
      const list = c.childNodes
        .filter((li) => li.nodeType === 1 && (li as HTMLElement).rawTagName?.toLowerCase() === 'li')
        .map((li) => listItem(li as HTMLElement))
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
      else out.push({ type: 'paragraph', snippet: text });
      continue;
    }
    walk(c, out);
  }
};

const listItem = (li: HTMLElement): Record<string, string> => {
  const text = cleanText(li);
  const strong = textOf(qs(li, 'strong'));
  if (strong && text.startsWith(strong) && text.length > strong.length) {
    return { title: strong.replace(/[:：]\s*$/, ''), snippet: text.slice(strong.length).replace(/^[\s:：]+/, '') };
  }
  return { snippet: text };
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
