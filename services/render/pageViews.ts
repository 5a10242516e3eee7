import type { Device } from '../../contracts/search.js';
import { PARSER_VERSION, type PositionMark, positionMarks, splitRawHtml } from '../../parser/index.js';
import type { SearchResultDoc } from '../../projections/searchResults/searchResults.js';
import type { BlobStore } from '../ports/blobStore.js';
import { deviceProfile } from '../ports/devices.js';
import { RenderError } from './errors.js';
import type { PageRenderer, Rectangle } from './pageRenderer.js';

/** What a screenshot asks for (docs/screenshots.md#screenshots). */
export interface ScreenshotRequest {
  format: 'png' | 'webp';
  /** the first screen only, else the whole page */
  viewport: boolean;
  /** CSS pixels; the search's device's width when absent */
  width?: number;
  /** device pixels per CSS pixel; the device's when absent */
  scale?: number;
}

/** Where each measured part of a search's first page lay (docs/screenshots.md#pixel-positions). */
export interface PagePositions {
  device: Device;
  viewport: { width: number; height: number };
  page_height: number;
  /** the page of the search whose whole layout (blocks, page height) was measured: 1, what the searcher saw first */
  rendered_page: number;
  /** how many of the search's pages were laid out, each later one's results stacked below the one before */
  pages_laid_out: number;
  /**
   * every page's organic results in rank order, by what identifies them in the merged result, with the page they
   * came from; a later page's rectangles are where its results block lies once stacked (docs/screenshots.md#what-is-rendered)
   */
  organic: Array<{ identity: string; page: number; rectangle: Rectangle | null }>;
  /** each list feature's entries, by identity */
  items: Record<string, Array<{ identity: string; rectangle: Rectangle | null }>>;
  /** each feature's block: its own element where the parser recorded one, else the union of its entries */
  blocks: Array<{ type: string; rectangle: Rectangle }>;
  ai_overview?: Rectangle | null;
}

export interface PageViews {
  /** the image of a finished search's first page; a second request for the same one is read from the blob store */
  screenshot(
    jobId: string,
    doc: SearchResultDoc,
    device: Device,
    request: ScreenshotRequest,
  ): Promise<{ image: Buffer; contentType: string; cached: boolean }>;
  /**
   * the search's pixel positions (its first page, and its later pages' results below it), measured once and kept;
   * `firstPageOnly`: one render, the first page alone (a monitor's measure: docs/rank-tracking.md#pixel-positions),
   * unless every page's are already kept
   */
  positions(
    jobId: string,
    doc: SearchResultDoc,
    device: Device,
    options?: { firstPageOnly?: boolean },
  ): Promise<PagePositions>;
}

/** Where a search's renders are kept: under its job, so retention deletes them with it (docs/operations.md#retention) */
export const renderPrefix = (jobId: string): string => `render/${jobId}/`;

/** What makes two entries the same across the parser's outputs: as the page merge judges it (parser/pages.ts) */
export const identityOf = (item: unknown): string => {
  if (!item || typeof item !== 'object') return `v:${String(item)}`;
  const o = item as Record<string, unknown>;
  for (const field of ['link', 'question', 'title', 'text', 'query', 'name']) {
    const v = o[field];
    if (typeof v === 'string' && v) return `${field}:${v}`;
  }
  return `json:${JSON.stringify(item)}`;
};

const union = (rects: Rectangle[]): Rectangle | undefined => {
  if (!rects.length) return undefined;
  const left = Math.min(...rects.map((r) => r.x));
  const top = Math.min(...rects.map((r) => r.y));
  const right = Math.max(...rects.map((r) => r.x + r.width));
  const bottom = Math.max(...rects.map((r) => r.y + r.height));
  return { x: left, y: top, width: right - left, height: bottom - top };
};

/** the pages of the stored raw HTML in page order (its markers name each page: docs/parser.md#how-it-reads-a-page) */
const storedPages = async (blobStore: BlobStore, doc: SearchResultDoc): Promise<string[]> => {
  const raw = await blobStore.get(doc.rawHtmlRef.key);
  if (!raw) throw new RenderError(410, 'SERP_RAW_GONE', 'the page this search was read from is no longer kept');
  const pages = splitRawHtml(raw.toString('utf8')).sort((a, b) => a.start - b.start);
  if (!pages[0]?.html) throw new RenderError(410, 'SERP_RAW_GONE', 'the page this search was read from is empty');
  return pages.map((p) => p.html);
};

/** the first page of the stored raw HTML: what a screenshot draws */
const firstPage = async (blobStore: BlobStore, doc: SearchResultDoc): Promise<string> =>
  (await storedPages(blobStore, doc))[0] as string;

/** the top and bottom of the rectangles given (a page's results block), undefined when none was measured */
const extent = (rects: ReadonlyArray<Rectangle | null>): { top: number; bottom: number } | undefined => {
  const drawn = rects.filter((r): r is Rectangle => r !== null);
  if (!drawn.length) return undefined;
  return { top: Math.min(...drawn.map((r) => r.y)), bottom: Math.max(...drawn.map((r) => r.y + r.height)) };
};

/**
 * Screenshots and pixel positions of stored pages (docs/screenshots.md), over the blob store's port (so the same in
 * both modes) and a renderer; without a renderer (no Chromium) every request answers 503.
 */
export const createPageViews = (deps: { blobStore: BlobStore; renderer?: PageRenderer }): PageViews => {
  const renderer = (): PageRenderer => {
    if (!deps.renderer)
      throw new RenderError(503, 'SERP_RENDER_UNAVAILABLE', 'this service renders no pages: it has no Chromium');
    return deps.renderer;
  };

  return {
    async screenshot(jobId, doc, device, request) {
      const profile = deviceProfile(device);
      const width = request.width ?? profile.viewport.width;
      const scale = request.scale ?? profile.deviceScaleFactor;
      const key = `${renderPrefix(jobId)}${device}-${request.viewport ? 'screen' : 'page'}-${width}w-${scale}x.${request.format}`;
      const contentType = request.format === 'png' ? 'image/png' : 'image/webp';
      const kept = await deps.blobStore.get(key);
      if (kept) return { image: kept, contentType, cached: true };
      const html = await firstPage(deps.blobStore, doc);
      const out = await renderer().render({
        html,
        device: profile,
        image: { format: request.format, fullPage: !request.viewport, width, scale },
      });
      const image = out.image as Buffer;
      await deps.blobStore.put(key, image);
      return { image, contentType, cached: false };
    },

    async positions(jobId, doc, device, options = {}) {
      // every page's positions, and the first page's alone, are kept under names of their own
      const everyPage = `${renderPrefix(jobId)}${device}-positions-pages-${PARSER_VERSION}.json`;
      const firstOnly = `${renderPrefix(jobId)}${device}-positions-${PARSER_VERSION}.json`;
      const keys = options.firstPageOnly ? [everyPage, firstOnly] : [everyPage];
      for (const name of keys) {
        const kept = await deps.blobStore.get(name);
        if (kept) return JSON.parse(kept.toString('utf8')) as PagePositions;
      }
      const key = options.firstPageOnly ? firstOnly : everyPage;
      const [page = '', ...stored] = await storedPages(deps.blobStore, doc);
      const later = options.firstPageOnly ? [] : stored;
      const { outcome, marks, html } = positionMarks(page, { captureAio: true, device });
      if (outcome.kind !== 'serp')
        throw new RenderError(422, 'SERP_RENDER_NOT_A_SERP', `the first page is not a results page (${outcome.kind})`);
      const out = await renderer().render({
        html,
        device: deviceProfile(device),
        measure: marks.map((m) => m.attribute),
      });
      const serp = outcome.serp;
      const rectOf = (m: PositionMark) => out.rectangles[m.attribute] ?? null;
      const organic = serp.organic_results.map((r, index) => {
        const mark = marks.find((m) => m.target.kind === 'organic' && m.target.index === index);
        return { identity: identityOf(r), page: 1, rectangle: mark ? rectOf(mark) : null };
      });
      // Later pages (docs/screenshots.md#what-is-rendered): each is rendered on its own, one render a page through the
      // same pool and deadline, and its results block (its first result's top to its last one's bottom) is stacked
      // right under the block above, as Google's continuous scroll appends the next page's results.
      let below = extent(organic.map((o) => o.rectangle))?.bottom ?? out.pageHeight;
      for (const [i, laterHtml] of later.entries()) {
        const pageNumber = i + 2;
        const next = positionMarks(laterHtml, { captureAio: false, device });
        if (next.outcome.kind !== 'serp') continue; // nothing of it is in the merged result
        const organicMarks = next.marks.filter((m) => m.target.kind === 'organic');
        const laid = await renderer().render({
          html: next.html,
          device: deviceProfile(device),
          measure: organicMarks.map((m) => m.attribute),
        });
        const rects = next.outcome.serp.organic_results.map((_, index) => {
          const mark = organicMarks.find((m) => m.target.kind === 'organic' && m.target.index === index);
          return mark ? (laid.rectangles[mark.attribute] ?? null) : null;
        });
        const block = extent(rects);
        if (!block) continue;
        const shift = below - block.top;
        for (const [index, r] of next.outcome.serp.organic_results.entries()) {
          const rect = rects[index];
          organic.push({
            identity: identityOf(r),
            page: pageNumber,
            rectangle: rect ? { ...rect, y: rect.y + shift } : null,
          });
        }
        below += block.bottom - block.top;
      }
      const items: PagePositions['items'] = {};
      const blocks: PagePositions['blocks'] = [];
      for (const [feature, value] of Object.entries(serp.serp_features)) {
        const list = Array.isArray(value)
          ? value
          : Array.isArray((value as { places?: unknown })?.places)
            ? ((value as { places: unknown[] }).places as unknown[])
            : undefined;
        const entryRects: Rectangle[] = [];
        if (list) {
          items[feature] = list.map((item, index) => {
            const mark = marks.find(
              (m) => m.target.kind === 'item' && m.target.feature === feature && m.target.index === index,
            );
            const rectangle = mark ? rectOf(mark) : null;
            if (rectangle) entryRects.push(rectangle);
            return { identity: identityOf(item), rectangle };
          });
        }
        const own = marks.find(
          (m) => (m.target.kind === 'block' || m.target.kind === 'feature') && m.target.feature === feature,
        );
        const rectangle = (own ? rectOf(own) : null) ?? union(entryRects);
        if (rectangle) blocks.push({ type: feature, rectangle });
      }
      const aioMark = marks.find((m) => m.target.kind === 'ai_overview');
      const aiOverview = aioMark ? rectOf(aioMark) : undefined;
      if (aiOverview) blocks.push({ type: 'ai_overview', rectangle: aiOverview });
      blocks.sort((a, b) => a.rectangle.y - b.rectangle.y);
      const positions: PagePositions = {
        device,
        viewport: out.viewport,
        page_height: out.pageHeight,
        rendered_page: 1,
        pages_laid_out: 1 + later.length,
        organic,
        items,
        blocks,
        ...(aiOverview !== undefined ? { ai_overview: aiOverview } : {}),
      };
      await deps.blobStore.put(key, JSON.stringify(positions));
      return positions;
    },
  };
};
