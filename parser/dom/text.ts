import { parseDocument } from './build.js';
import type { HTMLElement } from './nodes.js';

/** The document tree of a page (script, style and SVG bodies and comments left out), with its selector index. */
export const loadDom = (html: string): HTMLElement => parseDocument(html).root;

/** Visible text with whitespace collapsed; `textContent` already decodes entities. */
export const textOf = (el: HTMLElement | null | undefined): string =>
  el ? el.textContent.replace(/\s+/g, ' ').trim() : '';

/**
 * Text where block children are separated by a space, so `<div>a</div><div>b</div>` does not read "ab". Hidden
 * elements, and descendants for which `leaveOut` says so, add nothing.
 */
export const spacedText = (el: HTMLElement | null | undefined, leaveOut?: (e: HTMLElement) => boolean): string => {
  if (!el) return '';
  const out: string[] = [];
  const walk = (n: HTMLElement) => {
    for (const c of n.childNodes) {
      if (c.nodeType === 3) out.push(c.text);
      else if (c.nodeType === 1) {
        const ce = c as HTMLElement;
        if (ce.getAttribute('aria-hidden') === 'true' || ce.rawTagName === 'style' || ce.rawTagName === 'script')
          continue;
        if (leaveOut?.(ce)) continue;
        const block = BLOCK.has(ce.rawTagName?.toLowerCase() ?? '');
        if (block) out.push(' ');
        walk(ce);
        if (block) out.push(' ');
      }
    }
  };
  walk(el);
  return out.join('').replace(/\s+/g, ' ').trim();
};

const BLOCK = new Set(['div', 'p', 'li', 'ul', 'ol', 'br', 'tr', 'td', 'table', 'h1', 'h2', 'h3', 'h4', 'section']);

/** True when `el` sits inside any element matching one of the predicates (walking up to the root). */
export const hasAncestor = (el: HTMLElement, test: (a: HTMLElement) => boolean): boolean => {
  for (let p = el.parentNode; p && p.rawTagName !== null && p.nodeType === 1; p = p.parentNode) {
    if (test(p)) return true;
  }
  return false;
};

export const closestWhere = (el: HTMLElement, test: (a: HTMLElement) => boolean): HTMLElement | undefined => {
  for (let p: HTMLElement | null = el; p && p.nodeType === 1; p = p.parentNode) {
    if (test(p)) return p;
  }
  return undefined;
};

export const hasClass = (el: HTMLElement, cls: string): boolean => el.classes.includes(cls);
