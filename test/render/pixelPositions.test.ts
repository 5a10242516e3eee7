import t from 'tap';
import { ParsedSerp } from '../../contracts/result.js';
import { identityOf, type PagePositions } from '../../services/render/pageViews.js';
import { pixelPositionsMetadata, withPixelPositions } from '../../services/render/withPositions.js';

/**
 * `pixel_positions` (docs/screenshots.md#pixel-positions): each result and feature entry of the rendered first page
 * gets its rectangle, how far down it is and whether it shows on the first screen; a result of a later page, never
 * rendered, has no rectangle and is not above the fold.
 */
const rect = (y: number) => ({ x: 10, y, width: 600, height: 90 });
const result = ParsedSerp.parse({
  organic_results: [
    { position: 1, title: 'First', link: 'https://a.example/' },
    { position: 2, title: 'Below the fold', link: 'https://b.example/' },
    { position: 11, title: 'Second page', link: 'https://c.example/' },
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
  organic: [
    { identity: identityOf(result.organic_results[0]), rectangle: rect(300) },
    { identity: identityOf(result.organic_results[1]), rectangle: rect(900) },
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
      [11, null, false],
    ],
    'above the 768-pixel fold, below it, and a second-page result that was never rendered',
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
      blocks: [{ type: 'answer_box', rectangle: rect(150), pixels_from_top: 150, above_the_fold: true }],
    },
    'the viewport, the page’s height and every block, placed',
  );
});
