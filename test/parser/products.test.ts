import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { serpOfFixture } from './compare.js';

const WS = 'serp/websearcher';
const productsOf = (page: string) =>
  (serpOfFixture(`${WS}/${page}.html.gz`, { captureAio: true }).serp_features.immersive_products ?? []) as Array<
    Record<string, unknown>
  >;

t.test('popular products grids (2024 desktop) as immersive_products', { skip: fixturesMissing() }, async (t) => {
  t.test('the .MtXiu cards: every product with price, store, rating, reviews and picture', async (t) => {
    const items = productsOf('2024-03-13_file-folder_f10d116b26c6');
    t.equal(items.length, 32, 'the 32 WebSearcher lists');
    t.match(items[0], {
      position: 1,
      title: 'Office Depot File Folders 1/3 Cut',
      source: 'Office Depot',
      price: '$18.49',
      extracted_price: 18.49,
      rating: 4.8,
      reviews: 8600,
      thumbnail: /^data:image\//,
    });
    t.same(
      items.map((i) => i.position),
      items.map((_, n) => n + 1),
    );
  });
  t.test('the sho-apgc product-grid layout (data-attrid=apg-product-result)', async (t) => {
    const items = productsOf('2024-03-13_kaka-boots_880beebb66bb');
    t.equal(items.length, 16);
    t.match(items[1], {
      title: /^Hoka Kaha 2 Gtx Hiking Boot \| Duffle bag/,
      source: 'Huckberry',
      price: '$240.00',
      extracted_price: 240,
      thumbnail: /^https:\/\/encrypted-tbn/,
    });
    t.match(items[4], { title: "Olukai Men's Nalukai Kala Boot Sand/Bone", rating: 4.7, reviews: 76 });
    t.ok(
      items.every((i) => typeof i.price === 'string' && typeof i.source === 'string'),
      'each with its price and store',
    );
  });
  t.test('a card the grid repeats is reported once', async (t) => {
    const items = productsOf('2024-03-13_men-s-old-school-wears_760310a7eec2');
    const keys = items.map((i) => `${i.title}|${i.source}`);
    t.equal(new Set(keys).size, keys.length);
    t.equal(items.length, 22, "WebSearcher's 24 less its two repeats");
  });
  t.test('a page without the grid has none', async (t) => {
    t.same(productsOf('2024-03-13_cistern_81f344a9684a'), []);
  });
});
