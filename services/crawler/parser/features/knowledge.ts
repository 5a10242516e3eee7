import { textOf, unwrapLink } from '../dom.js';
import type { HTMLElement } from '../html.js';
import { closest, qs, qsa } from '../select.js';

/**
 * Knowledge panel: `.kp-wholepage` (2020–26; a right-hand `#rhs .kp-wholepage` or the `-osrp` top layout) or the
 * older `#rhs .kp-blk`. Fields are found by `data-attrid`, which names the Freebase-style property and does not
 * depend on the interface language: `title`, `subtitle`, `description`, and `kc:/…`/`ss:/…` facts whose label is
 * `.w8qArf` and value `.LrzXr`.
 */
export const knowledgeGraph = (root: HTMLElement): Record<string, unknown> | undefined => {
  // Pages hold several `.kp-wholepage` shells; the panel is the one around the entity title.
  const titleEl = qs(root, '[data-attrid="title"]') ?? qs(root, '#rhs h2');
  if (!titleEl) return undefined;
  const panel =
    closest(titleEl, '.kp-wholepage') ?? closest(titleEl, '#rhs') ?? closest(titleEl, '.kp-blk') ?? titleEl.parentNode;
  if (!panel) return undefined;
  const title =
    textOf(qs(panel, '[data-attrid="title"]')) || textOf(qs(panel, 'h2[data-attrid]')) || textOf(qs(panel, '.qrShPb'));
  // Google also emits an empty `.kp-wholepage` shell on pages without a panel; no title means no panel.
  if (!title) return undefined;
  const kg: Record<string, unknown> = { title };
  const type = textOf(qs(panel, '[data-attrid="subtitle"]'));
  if (type) kg.type = type;
  const descEl = qs(panel, '[data-attrid="description"]') ?? qs(panel, '.kno-rdesc');
  const descSpan = qs(descEl, 'span');
  const description = textOf(descSpan ?? descEl).replace(/\s*(Wikipedia|Wikipédia|Википедия)$/, '');
  if (description) kg.description = description;
  const srcA = qs(descEl, 'a[href]');
  const srcLink = unwrapLink(srcA?.getAttribute('href'));
  if (srcA && srcLink && /^https?:/.test(srcLink)) kg.source = { name: textOf(srcA), link: srcLink };
  const site = qs(panel, '[data-attrid="visit_official_site"] a[href]') ?? qs(panel, 'a.ab_button[href^="http"]');
  const website = unwrapLink(site?.getAttribute('href'));
  if (website) kg.website = website;
  const kgmid =
    qs(panel, '[data-kgmid]')?.getAttribute('data-kgmid') ?? qs(root, '[data-mid]')?.getAttribute('data-mid');
  if (kgmid) kg.kgmid = kgmid;
  for (const fact of qsa(panel, '[data-attrid^="kc:/"], [data-attrid^="ss:/"]')) {
    const label = textOf(qs(fact, '.w8qArf')).replace(/[:：]\s*$/, '');
    const value = textOf(qs(fact, '.LrzXr') ?? qs(fact, '.kno-fv'));
    if (!label || !value) continue;
    const key = label
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, '_')
      .replace(/^_|_$/g, '');
    if (key && kg[key] === undefined) kg[key] = value;
  }
  return kg;
};
