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
  /** the page of the search that was rendered (1: what the searcher saw first) */
  rendered_page: number;
  /** the first page's organic results in its order, by what identifies them in the merged result */
  organic: Array<{ identity: string; rectangle: Rectangle | null }>;
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
  /** the first page's pixel positions, measured once and kept */
  positions(jobId: string, doc: SearchResultDoc, device: Device): Promise<PagePositions>;
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

/** the first page of the stored raw HTML (its markers name each page: docs/parser.md#how-it-reads-a-page) */
const firstPage = async (blobStore: BlobStore, doc: SearchResultDoc): Promise<string> => {
  const raw = await blobStore.get(doc.rawHtmlRef.key);
  if (!raw) throw new RenderError(410, 'SERP_RAW_GONE', 'the page this search was read from is no longer kept');
  const first = splitRawHtml(raw.toString('utf8')).sort((a, b) => a.start - b.start)[0];
  if (!first?.html) throw new RenderError(410, 'SERP_RAW_GONE', 'the page this search was read from is empty');
  return first.html;
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

    async positions(jobId, doc, device) {
      const key = `${renderPrefix(jobId)}${device}-positions-${PARSER_VERSION}.json`;
      const kept = await deps.blobStore.get(key);
      if (kept) return JSON.parse(kept.toString('utf8')) as PagePositions;
      const page = await firstPage(deps.blobStore, doc);
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
        return { identity: identityOf(r), rectangle: mark ? rectOf(mark) : null };
      });
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
