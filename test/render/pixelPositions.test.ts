import t from 'tap';
import { ParsedSerp } from '../../contracts/result.js';
import { identityOf, type PagePositions } from '../../services/render/pageViews.js';
import { pixelPositionsMetadata, withPixelPositions } from '../../services/render/withPositions.js';

/**
 * `pixel_positions` (docs/screenshots.md#pixel-positions): each result and feature entry gets its rectangle, how far
 * down it is and whether it shows on the first screen; a later page's results, stacked below the first page's
 * (docs/screenshots.md#what-is-rendered), are never above the fold.
 */
const rect = (y: number) => ({ x: 10, y, width: 600, height: 90 });
const result = ParsedSerp.parse({
  organic_results: [
    { position: 1, title: 'First', link: 'https://a.example/' },
    { position: 2, title: 'Below the fold', link: 'https://b.example/' },
    { position: 11, title: 'Second page', link: 'https://c.example/' },
    { position: 12, title: 'Not measured', link: 'https://d.example/' },
  ],
  serp_features: {
    related_questions: [{ question: 'Why?' }, { question: 'How?' }],
    answer_box: { snippet: 'An answer' },
  },
  information: {},
});
const positions: PagePositions = {
  device: 'desktop',
  viewport: { width: 1366, height: 768 },
  page_height: 4200,
  rendered_page: 1,
  pages_laid_out: 2,
  organic: [
    { identity: identityOf(result.organic_results[0]), page: 1, rectangle: rect(300) },
    { identity: identityOf(result.organic_results[1]), page: 1, rectangle: rect(900) },
    // the second page repeats the first result: the merge keeps it where it first appeared, and so do its positions
    { identity: identityOf(result.organic_results[0]), page: 2, rectangle: rect(990) },
    // a short first page: the second page's result lies within the first screen's height, but only shows on a scroll
    { identity: identityOf(result.organic_results[2]), page: 2, rectangle: rect(600) },
  ],
  items: { related_questions: [{ identity: identityOf({ question: 'Why?' }), rectangle: rect(500) }] },
  blocks: [{ type: 'answer_box', rectangle: rect(150) }],
};

t.test('pixel positions › results and features', async (t) => {
  const placed = withPixelPositions(result, positions);
  t.same(
    placed.organic_results.map((r) => [r.position, r.pixels_from_top, r.above_the_fold]),
    [
      [1, 300, true],
      [2, 900, false],
      [11, 600, false],
      [12, null, false],
    ],
    'above the 768-pixel fold, below it, a second-page result (never above the fold), and one with no measure',
  );
  t.match(placed.organic_results[0], { rectangle: rect(300), title: 'First' }, 'the result keeps what it had');
  t.same(
    (placed.serp_features.related_questions as { question: string; pixels_from_top: number | null }[]).map((q) => [
      q.question,
      q.pixels_from_top,
    ]),
    [
      ['Why?', 500],
      ['How?', null],
    ],
    'a list feature’s entries, each by its identity; one not measured has none',
  );
  t.match(
    placed.serp_features.answer_box,
    { snippet: 'An answer', pixels_from_top: 150, above_the_fold: true },
    'a block',
  );
});

t.test('pixel positions › the metadata', async (t) => {
  t.same(
    pixelPositionsMetadata(positions),
    {
      device: 'desktop',
      viewport: { width: 1366, height: 768 },
      page_height: 4200,
      rendered_page: 1,
      pages_laid_out: 2,
      blocks: [{ type: 'answer_box', rectangle: rect(150), pixels_from_top: 150, above_the_fold: true }],
    },
    'the viewport, the page’s height and every block, placed',
  );
});
