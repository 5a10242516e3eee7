import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { type Census, censusOfCorpus, diffCensus } from './census.js';

/**
 * Which fixture pages carry a knowledge panel and an image pack, and how many images, over the whole corpus: a new
 * panel or image-pack reader must add its feature only to the pages that hold that layout, and this pin says which
 * ones moved. Read from the parser and checked against the other parsers' expected outputs where the pages have them
 * (WebSearcher's `knowledge`/`images` components, serp-parser's panel assertions). The readers of the 2025 "About …"
 * panel in the results column and of the 2024 "multimedia" image row (docs/parser.md) changed no page here: no
 * fixture page holds either layout.
 */
const KNOWLEDGE_GRAPH = [
  'juremrzek-google-scraper/sushi',
  'nimble-elixir-topnimble/keyword_with_no_adwords',
  'nimble-elixir-topnimble/keyword_with_top_adwords',
  'nimble-google-scraper-ruby-goose97/google_no_ads',
  'nimble-google-scraper-ruby-goose97/iphone_store',
  'nimble-google-scraper-ruby-goose97/ruby_11_non_ads',
  'search-navigator/20250525_all_tokyo_9',
  'serp-parser-zlurad/desktop/_com-domains',
  'serp-parser-zlurad/desktop/coffee',
  'serp-parser-zlurad/desktop/dell',
  'serp-parser-zlurad/desktop/domain',
  'serp-parser-zlurad/desktop/google-100',
  'serp-parser-zlurad/desktop/google',
  'serp-parser-zlurad/desktop/matrix',
  'serp-parser-zlurad/desktop/old/_com-domains',
  'serp-parser-zlurad/desktop/old/coffee',
  'serp-parser-zlurad/desktop/old/dell',
  'serp-parser-zlurad/desktop/old/domain',
  'serp-parser-zlurad/desktop/old/google-100',
  'serp-parser-zlurad/desktop/old/google',
  'serp-parser-zlurad/desktop/old/matrix',
  'serp-parser-zlurad/desktop/old/paris',
  'serp-parser-zlurad/desktop/paris',
  'serp-parser-zlurad/mobile/_com-domains',
  'serp-parser-zlurad/mobile/coffee',
  'serp-parser-zlurad/mobile/dell',
  'serp-parser-zlurad/mobile/domain',
  'serp-parser-zlurad/mobile/google-100',
  'serp-parser-zlurad/mobile/matrix',
  'serp-parser-zlurad/mobile/old/_com-domains',
  'serp-parser-zlurad/mobile/old/coffee',
  'serp-parser-zlurad/mobile/old/google-100',
  'serp-parser-zlurad/mobile/old/google',
  'serp-parser-zlurad/mobile/old/matrix',
  'serp_parser-kjellberg-ruby/full_html_response',
  'websearcher/2023-html_pages/1684516032',
  'websearcher/2024-03-13_cistern_81f344a9684a',
  'websearcher/2024-03-13_define-judgement_4f4d0fed0592',
  'websearcher/2024-03-13_mater-cars_054791556a3a',
  'websearcher/2024-03-13_oscar-the-grouch_7d621e868493',
  'websearcher/2024-03-13_pitbull-i-believe-that-we-will-win-world_eef22ed8a7ee',
  'websearcher/2024-03-13_prouve_334a0bfcce0b',
  'websearcher/2025-02-06_metropolitan-los-angeles-area_bb50002482cc',
];

/** Images per page. WebSearcher lists kaka-boots' eight labelled refinement chips as "small" images: they are
 * searches, not pictures, so 6; and metropolitan-los-angeles-area's sixth image repeats its first (same page). */
const INLINE_IMAGES: Record<string, number> = {
  'debug-dumps-2025-2026/linkedin-ch-scraper_2026-07-14_site-query_fr-DZ': 6,
  'juremrzek-google-scraper/sushi': 12,
  'kokoc-google-parser/2022-03-31-1.decoded': 10,
  'kokoc-google-parser/2024-05-06.decoded': 3,
  'kokoc-google-parser/bad_json_2024-05-07': 3,
  'nimble-elixir-topnimble/keyword_with_no_adwords': 10,
  'serp-parser-zlurad/desktop/hotels-london': 10,
  'serp-parser-zlurad/mobile/coffee': 14,
  'serp-parser-zlurad/mobile/hotels-london': 4,
  'serp_parser-kjellberg-ruby/full_html_response': 3,
  'websearcher/2024-03-13_birthday-cake-with-candles_513d1bfb479f': 9,
  'websearcher/2024-03-13_drawing-tablet_2cb96b64e45d': 3,
  'websearcher/2024-03-13_file-folder_f10d116b26c6': 3,
  'websearcher/2024-03-13_kaka-boots_880beebb66bb': 6,
  'websearcher/2024-03-13_mater-cars_054791556a3a': 5,
  'websearcher/2024-03-13_men-s-old-school-wears_760310a7eec2': 3,
  'websearcher/2024-03-13_oscar-the-grouch_7d621e868493': 5,
  'websearcher/2025-02-06_metropolitan-los-angeles-area_bb50002482cc': 5,
};

const page = (name: string): string => `serp/${name}.html.gz`;

const missing = fixturesMissing();

t.test('feature census › knowledge panels and image packs, page by page', { skip: missing }, async (t) => {
  const census = censusOfCorpus();
  const pinned: Census = {};
  const got: Census = {};
  for (const [p, counts] of Object.entries(census)) {
    got[p] = {};
    pinned[p] = {};
    if (counts.knowledge_graph !== undefined) got[p].knowledge_graph = counts.knowledge_graph;
    if (counts.inline_images !== undefined) got[p].inline_images = counts.inline_images;
  }
  const pin = (name: string): Record<string, number> => {
    const p = page(name);
    if (!pinned[p]) pinned[p] = {};
    return pinned[p];
  };
  for (const name of KNOWLEDGE_GRAPH) pin(name).knowledge_graph = 1;
  for (const [name, n] of Object.entries(INLINE_IMAGES)) pin(name).inline_images = n;
  t.same(diffCensus(pinned, got), [], 'no page gains, loses or recounts a panel or an image pack');
  const absent = Object.keys(pinned).filter((p) => !(p in census));
  t.same(absent, [], 'every pinned page is in the corpus');
});

t.test('feature census › the diff names what moved', async (t) => {
  const before: Census = { a: { knowledge_graph: 1, inline_images: 3 }, b: {} };
  const after: Census = { a: { inline_images: 5 }, b: { knowledge_graph: 1 } };
  t.same(diffCensus(before, after), ['~ a inline_images 3 → 5', '- a knowledge_graph (1)', '+ b knowledge_graph (1)']);
});
