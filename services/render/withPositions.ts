import type { ParsedSerp } from '../../contracts/result.js';
import type { Rectangle } from './pageRenderer.js';
import { identityOf, type PagePositions } from './pageViews.js';

/** what each measured thing carries: where it is, how far down and whether it shows on the first screen */
const placed = (rectangle: Rectangle | null | undefined, viewportHeight: number, page = 1) => ({
  rectangle: rectangle ?? null,
  pixels_from_top: rectangle ? rectangle.y : null,
  // a later page shows only once the searcher scrolls past the first one's results (docs/screenshots.md#what-is-rendered)
  above_the_fold: rectangle && page === 1 ? rectangle.y < viewportHeight : false,
});

/** `search_metadata.pixel_positions`: the viewport, the page's height and every feature block, top to bottom */
export const pixelPositionsMetadata = (positions: PagePositions) => ({
  device: positions.device,
  viewport: positions.viewport,
  page_height: positions.page_height,
  rendered_page: positions.rendered_page,
  pages_laid_out: positions.pages_laid_out,
  blocks: positions.blocks.map((b) => ({ type: b.type, ...placed(b.rectangle, positions.viewport.height) })),
});

/**
 * A parsed result with its pixel positions (docs/screenshots.md#pixel-positions): each organic result (of every page,
 * a later page's stacked below the first) and each entry of a first-page list feature gets `rectangle`,
 * `pixels_from_top` and `above_the_fold`, matched to what was measured by the identity the page merge uses (link, else
 * question, title…); the merge keeps a repeated result where it first appeared, so the first measure of an identity
 * is its. Single-object features and the AI Overview get their block's.
 */
export const withPixelPositions = <T extends ParsedSerp>(result: T, positions: PagePositions): T => {
  const fold = positions.viewport.height;
  const organic = new Map<string, { rectangle: Rectangle | null; page: number }>();
  for (const o of positions.organic)
    if (!organic.has(o.identity)) organic.set(o.identity, { rectangle: o.rectangle, page: o.page });
  const features: Record<string, unknown> = { ...result.serp_features };
  for (const [name, measured] of Object.entries(positions.items)) {
    const byIdentity = new Map(measured.map((m) => [m.identity, m.rectangle]));
    const value = features[name];
    const mark = (item: unknown) =>
      item && typeof item === 'object' ? { ...item, ...placed(byIdentity.get(identityOf(item)), fold) } : item;
    if (Array.isArray(value)) features[name] = value.map(mark);
    else if (value && typeof value === 'object' && Array.isArray((value as { places?: unknown }).places)) {
      const v = value as { places: unknown[] };
      features[name] = { ...v, places: v.places.map(mark) };
    }
  }
  for (const block of positions.blocks) {
    const value = features[block.type];
    if (value && typeof value === 'object' && !Array.isArray(value))
      features[block.type] = { ...value, ...placed(block.rectangle, fold) };
  }
  return {
    ...result,
    organic_results: result.organic_results.map((r) => {
      const measured = organic.get(identityOf(r));
      return { ...r, ...placed(measured?.rectangle, fold, measured?.page) };
    }),
    serp_features: features,
    ...(result.ai_overview ? { ai_overview: { ...result.ai_overview, ...placed(positions.ai_overview, fold) } } : {}),
  };
};
