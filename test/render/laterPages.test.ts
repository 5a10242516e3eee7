import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { assembleRawHtml, parseRaw } from '../../parser/index.js';
import type { SearchResultDoc } from '../../projections/searchResults/searchResults.js';
import { createFsBlobStore } from '../../services/adapters/blobStore/fs.js';
import { createPageRenderer, type PageRenderer } from '../../services/render/pageRenderer.js';
import { createPageViews } from '../../services/render/pageViews.js';
import { pixelPositionsMetadata, withPixelPositions } from '../../services/render/withPositions.js';
import { chromiumMissing, chromiumPath } from '../support/chromium.js';
import { DEFAULT_PAGES } from '../support/fakeGoogle.js';
import { fixturesMissing, readFixtureText } from '../support/fixtures.js';

/**
 * Pixel positions of a search of several pages (docs/screenshots.md#what-is-rendered), in real Chromium: every page is
 * rendered once, and each later page's results are stacked below the page before's, so every organic result of the
 * search has a rectangle and the tops grow in rank order across pages.
 */
t.test('pixel positions of a search of three pages', { skip: fixturesMissing() ?? chromiumMissing() }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'later-pages-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const inner = createPageRenderer({
    executablePath: chromiumPath as string,
    concurrency: 2,
    queue: 4,
    deadlineMs: 60_000,
    nice: 10,
  });
  t.teardown(() => inner.close());
  let renders = 0;
  const renderer: PageRenderer = {
    ...inner,
    render: (request) => {
      renders += 1;
      return inner.render(request);
    },
  };
  const blobStore = createFsBlobStore(join(dir, 'blobs'));
  const views = createPageViews({ blobStore, renderer });
  const pages = [DEFAULT_PAGES[0], DEFAULT_PAGES[1], DEFAULT_PAGES[8]].map((path, i) => ({
    start: 10 * i,
    url: `https://www.google.com/search?q=x&start=${10 * i}`,
    fetchedAt: '2026-12-07T00:00:00.000Z',
    html: readFixtureText(path as string),
  }));
  const raw = assembleRawHtml(pages);
  const rawHtmlRef = await blobStore.put('raw/job1.html', raw);
  const doc = { rawHtmlRef } as SearchResultDoc;
  const parsed = parseRaw(raw, { captureAio: true, device: 'desktop' });
  if (parsed.kind !== 'serp') throw new Error(`the fixture pages did not parse: ${parsed.kind}`);

  const positions = await views.positions('job1', doc, 'desktop');
  t.equal(renders, 3, 'one render a page');
  const placed = withPixelPositions(parsed.serp, positions);
  const organic = placed.organic_results as unknown as Array<{
    position: number;
    rectangle: { y: number; height: number } | null;
    pixels_from_top: number | null;
    above_the_fold: boolean;
  }>;
  t.ok(organic.length > 20, `${organic.length} organic results over three pages`);
  t.ok(
    organic.every((r) => r.rectangle !== null && r.pixels_from_top === r.rectangle.y),
    'every result of every page has a rectangle and its distance from the top',
  );
  const tops = organic.map((r) => r.pixels_from_top as number);
  t.same(
    tops,
    [...tops].sort((a, b) => a - b),
    `tops grow in rank order across pages: ${tops.join(', ')}`,
  );
  const byPage = (page: number) => positions.organic.filter((o) => o.page === page);
  const firstBottom = Math.max(...byPage(1).map((o) => (o.rectangle ? o.rectangle.y + o.rectangle.height : 0)));
  const secondTop = Math.min(...byPage(2).map((o) => o.rectangle?.y ?? Number.POSITIVE_INFINITY));
  t.equal(secondTop, firstBottom, "the second page's results start where the first page's end");
  t.ok(secondTop > positions.viewport.height, 'which is below the first screen');
  const later = new Set([...byPage(2), ...byPage(3)].map((o) => o.identity));
  t.ok(later.size > 10, 'the later pages gave results of their own');
  t.ok(
    organic.filter((r) => later.has(`link:${(r as { link?: string }).link}`)).every((r) => !r.above_the_fold),
    'no result of a later page is above the fold',
  );
  t.match(
    pixelPositionsMetadata(positions),
    { rendered_page: 1, pages_laid_out: 3, viewport: { width: 1366, height: 768 } },
    'the metadata says three pages were laid out',
  );

  await views.positions('job1', doc, 'desktop');
  t.equal(renders, 3, 'the positions are kept: asked again, nothing is rendered');
  t.equal(
    (await views.positions('job1', doc, 'desktop', { firstPageOnly: true })).pages_laid_out,
    3,
    "a monitor's measure takes every page's positions when they are kept, rendering nothing",
  );
  t.equal(renders, 3);

  t.test("a monitor's measure: the first page alone, one render a search", async (t) => {
    const before = renders;
    const first = await views.positions('job2', doc, 'desktop', { firstPageOnly: true });
    t.equal(renders - before, 1, 'one render');
    t.equal(first.pages_laid_out, 1);
    const firstPlaced = withPixelPositions(parsed.serp, first).organic_results as unknown as Array<{
      rectangle: unknown;
      above_the_fold: boolean;
    }>;
    const onFirst = first.organic.length;
    t.ok(
      firstPlaced.slice(0, onFirst).every((r) => r.rectangle !== null),
      'the first page has its rectangles',
    );
    t.ok(
      firstPlaced.slice(onFirst).every((r) => r.rectangle === null && !r.above_the_fold),
      "a later page's results have none and are below the fold",
    );
    await views.positions('job2', doc, 'desktop', { firstPageOnly: true });
    t.equal(renders - before, 1, 'kept: asked again, nothing is rendered');
  });
});
