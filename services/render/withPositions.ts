import type { ParsedSerp } from '../../contracts/result.js';
import type { Rectangle } from './pageRenderer.js';
import { identityOf, type PagePositions } from './pageViews.js';

/** what each measured thing carries: where it is, how far down and whether it shows on the first screen */
const placed = (rectangle: Rectangle | null | undefined, viewportHeight: number) => ({
  rectangle: rectangle ?? null,
  pixels_from_top: rectangle ? rectangle.y : null,
  above_the_fold: rectangle ? rectangle.y < viewportHeight : false,
});

/** `search_metadata.pixel_positions`: the viewport, the page's height and every feature block, top to bottom */
export const pixelPositionsMetadata = (positions: PagePositions) => ({
  device: positions.device,
  viewport: positions.viewport,
  page_height: positions.page_height,
  rendered_page: positions.rendered_page,
  blocks: positions.blocks.map((b) => ({ type: b.type, ...placed(b.rectangle, positions.viewport.height) })),
});

/**
 * A parsed result with the first page's pixel positions (docs/screenshots.md#pixel-positions): each organic result and
 * each entry of a list feature gets `rectangle`, `pixels_from_top` and `above_the_fold`, matched to what was measured
 * by the identity the page merge uses (link, else question, title…); a result of a later page, never rendered, has
 * `rectangle: null` and is not above the fold. Single-object features and the AI Overview get their block's.
 */
export const withPixelPositions = <T extends ParsedSerp>(result: T, positions: PagePositions): T => {
  const fold = positions.viewport.height;
  const organic = new Map(positions.organic.map((o) => [o.identity, o.rectangle]));
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
    organic_results: result.organic_results.map((r) => ({ ...r, ...placed(organic.get(identityOf(r)), fold) })),
    serp_features: features,
    ...(result.ai_overview ? { ai_overview: { ...result.ai_overview, ...placed(positions.ai_overview, fold) } } : {}),
  };
};
