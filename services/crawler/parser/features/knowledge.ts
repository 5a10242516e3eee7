import type { HTMLElement } from 'node-html-parser';
import { textOf, unwrapLink } from '../dom.js';

/**
 * Knowledge panel: `.kp-wholepage` (2020–26; a right-hand `#rhs .kp-wholepage` or the `-osrp` top layout) or the
 * older `#rhs .kp-blk`. Fields are found by `data-attrid`, which names the Freebase-style property and does not
 * depend on the interface language: `title`, `subtitle`, `description`, and `kc:/…`/`ss:/…` facts whose label is
 * `.w8qArf` and value `.LrzXr`.
 */
export const knowledgeGraph = (root: HTMLElement): Record<string, unknown> | undefined => {
  const panel =
    root.querySelector('.kp-wholepage') ??
    root.querySelector('#rhs .kp-blk') ??
    root.querySelector('#rhs [data-attrid="title"]')?.parentNode;
  if (!panel) return undefined;
  const title =
    textOf(panel.querySelector('[data-attrid="title"]')) ||
    textOf(panel.querySelector('h2[data-attrid]')) ||
    textOf(panel.querySelector('.qrShPb'));
  // Google also emits an empty `.kp-wholepage` shell on pages without a panel; no title means no panel.
  if (!title) return undefined;
  const kg: Record<string, unknown> = { title };
  const type = textOf(panel.querySelector('[data-attrid="subtitle"]'));
  if (type) kg.type = type;
  const descEl = panel.querySelector('[data-attrid="description"]') ?? panel.querySelector('.kno-rdesc');
  const descSpan = descEl?.querySelector('span');
  const description = textOf(descSpan ?? descEl).replace(/\s*(Wikipedia|Wikipédia|Википедия)$/, '');
  if (description) kg.description = description;
  const srcA = descEl?.querySelector('a[href]');
  const srcLink = unwrapLink(srcA?.getAttribute('href'));
  if (srcA && srcLink && /^https?:/.test(srcLink)) kg.source = { name: textOf(srcA), link: srcLink };
  const site =
    panel.querySelector('[data-attrid="visit_official_site"] a[href]') ??
    panel.querySelector('a.ab_button[href^="http"]');
  const website = unwrapLink(site?.getAttribute('href'));
  if (website) kg.website = website;
  const kgmid =
    panel.querySelector('[data-kgmid]')?.getAttribute('data-kgmid') ??
    root.querySelector('[data-mid]')?.getAttribute('data-mid');
  if (kgmid) kg.kgmid = kgmid;
  for (const fact of panel.querySelectorAll('[data-attrid^="kc:/"], [data-attrid^="ss:/"]')) {
    const label = textOf(fact.querySelector('.w8qArf')).replace(/[:：]\s*$/, '');
    const value = textOf(fact.querySelector('.LrzXr') ?? fact.querySelector('.kno-fv'));
    if (!label || !value) continue;
    const key = label
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, '_')
      .replace(/^_|_$/g, '');
    if (key && kg[key] === undefined) kg[key] = value;
  }
  return kg;
};
