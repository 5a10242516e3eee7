import t from 'tap';
import { parse } from '../../parser/index.js';
import { fixturesMissing, listSerpPages, readFixtureText } from '../support/fixtures.js';
import { compatOf } from './compare.js';

type Topic = Record<string, unknown> & { topic: string; options?: Array<Record<string, unknown>> };
type Guide = { title: string; topics: Topic[] };

const PAGE = 'serp/websearcher/2024-03-13_drawing-tablet_2cb96b64e45d.html.gz';

const featuresOf = (file: string): Record<string, unknown> => {
  const out = parse(readFixtureText(file), { captureAio: false });
  return out.kind === 'serp' ? out.serp.serp_features : {};
};

const missing = fixturesMissing();

t.test('buying guide › its topics, each with the line under it, in page order', { skip: missing }, async (t) => {
  const guide = featuresOf(PAGE).buying_guide as Guide | undefined;
  t.equal(guide?.title, 'Graphics Tablets', 'the heading without "Buying guide:"');
  // The four shown and the four behind "More considerations" (WebSearcher's snapshot lists the same eight).
  t.same(
    guide?.topics.map((x) => [x.topic, x.summary]),
    [
      ['price', 'How much does a graphic tablet cost?'],
      ['popular brands', 'Including Wacom, Huion, XP-Pen'],
      ['sizes', 'How do I know what size graphic tablet to get?'],
      ['popular types', 'Including Mac OS, Windows OS, Android'],
      ['resolution', 'What resolution should a graphics tablet be?'],
      ['display', 'What is the best drawing display tablet?'],
      ['warranty', 'How long is the warranty on a Huion tablet?'],
      ['specs', 'What graphics tablet do professionals use?'],
    ],
  );
});

t.test(
  'buying guide › answers come from the deferred fragments, read as "People also ask" reads them',
  {
    skip: missing,
  },
  async (t) => {
    const topics = (featuresOf(PAGE).buying_guide as Guide | undefined)?.topics ?? [];
    const byName = (name: string) => topics.find((x) => x.topic === name);
    t.match(byName('price'), {
      snippet: /^A drawing tablet can cost you just around 30\$ to over 2\.500\$! .* is around 850\$\.$/,
      title: 'Average Drawing Tablet Price (with Examples and Recommendations!)',
      link: /^https:\/\/doncorgi\.com\/blog\/drawing-tablet-price\//,
      displayed_link: 'https://doncorgi.com › blog › drawing-tablet-price',
    });
    t.match(byName('sizes'), { date: 'Jan 23, 2016', title: 'Guide to the graphics tablet size to get - Parka Blogs' });
    // A list answer: the heading above it is the snippet.
    t.match(byName('display'), {
      snippet: 'The best drawing tablets available now',
      list: ['Wacom Cintiq 22. ...', 'Wacom Intuos Pro (large) ...', 'Huion H430P. ...'],
      date: 'Jun 8, 2022',
      link: 'https://www.creativebloq.com/features/best-drawing-tablet',
    });
    t.equal((byName('specs')?.list as string[] | undefined)?.length, 4);
  },
);

t.test('buying guide › a topic answered with a row of brands lists them as options', { skip: missing }, async (t) => {
  const topics = (featuresOf(PAGE).buying_guide as Guide | undefined)?.topics ?? [];
  const brands = topics.find((x) => x.topic === 'popular brands')?.options ?? [];
  t.same(
    brands.map((o) => [o.name, o.price]),
    [
      ['Wacom', '$55–$1563'],
      ['Huion', '$32–$549'],
      ['XP-Pen', '$33–$521'],
      ['Boogie Board', '$19–$43'],
      ['Ugee', '$36–$73'],
      ['Richgv', '$10–$22'],
      ['Bosto', '$41–$348'],
    ],
  );
  t.match(brands[0], {
    link: /^https:\/\/www\.google\.com\/search\?sca_esv=52b056e1a97f92b3&q=Wacom\+graphics\+tablets&/,
    thumbnail: /^https:\/\/encrypted-tbn0\.gstatic\.com\/images\?q=tbn:ANd9GcROIRq48ccRlh-A-rvS2b6ULDVEhv_/,
  });
  t.notOk('snippet' in (topics.find((x) => x.topic === 'popular brands') ?? {}), 'no answer text beside the row');
  const kinds = topics.find((x) => x.topic === 'popular types')?.options ?? [];
  t.same(
    kinds.map((o) => o.name),
    [
      'Mac OS graphics tablets',
      'Windows OS graphics tablets',
      'Android graphics tablets',
      'Chrome OS graphics tablets',
      'Linux graphics tablets',
      'iOS graphics tablets',
    ],
  );
});

t.test(
  'buying guide › compat carries it at the top level; no other fixture page has one',
  { skip: missing },
  async (t) => {
    const compat = compatOf(
      { organic_results: [], serp_features: featuresOf(PAGE), information: {} },
      { q: 'drawing tablet' },
    );
    t.match(compat.buying_guide, { title: 'Graphics Tablets', topics: [{ topic: 'price' }] });
    const others = (missing ? [] : listSerpPages()).filter((p) => p !== PAGE && featuresOf(p).buying_guide);
    t.same(others, [], 'only the drawing-tablet page shows the block');
  },
);
