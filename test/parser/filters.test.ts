import t from 'tap';
import { mergePages, parse } from '../../parser/index.js';
import { fixturesMissing, readFixtureText } from '../support/fixtures.js';
import { compatOf } from './compare.js';

type Filter = { name: string; link: string; uds: string; q: string };

const featuresOf = (file: string): Record<string, unknown> => {
  const out = parse(readFixtureText(file), { captureAio: false });
  return out.kind === 'serp' ? out.serp.serp_features : {};
};

const filtersOf = (file: string): Filter[] | undefined => featuresOf(file).filters as Filter[] | undefined;

const missing = fixturesMissing();

t.test("filter chips › SerpApi's filters[]: name, link, uds, q", { skip: missing }, async (t) => {
  // 2024 desktop: the row holds "Images" (a tab) between the chips; the chips narrow the query.
  const judgement = filtersOf('serp/websearcher/2024-03-13_define-judgement_4f4d0fed0592.html.gz');
  t.same(
    judgement?.map((f) => [f.name, f.q]),
    [
      ['In law', 'Define judgement in law'],
      ['In the Bible', 'Define judgement in the Bible'],
      ['In a sentence', 'Define judgement in a sentence'],
    ],
  );
  t.match(judgement?.[0], {
    link: /^https:\/\/www\.google\.com\/search\?sca_esv=52b056e1a97f92b3&q=Define\+judgement\+in\+law&uds=AMwkrPuRs_yo/,
    uds: /^AMwkrPuRs_yoGxcn3kB6NW91btP6D6YoCO4uY2PMU3NOH4AeuW_RtcPUnz4U6Kid8wmINLN1gWVQyY3wz0BnAPV__kR3RMuaC/,
  });
  for (const f of judgement ?? []) t.ok(f.link.includes(`uds=${f.uds}`), `${f.name}: the link carries its token`);
  // 2025 desktop: six tabs (News, Jobs, Images, Videos, Forums, Shopping), then three chips.
  t.same(
    filtersOf('serp/websearcher/2025-02-06_barclays-job-cuts_ad1eb5594673.html.gz')?.map((f) => [f.name, f.q]),
    [
      ['Today', 'Barclays job cuts today'],
      ['No degree', 'barclays job cuts no degree'],
      ['Remote', 'barclays job cuts remote'],
    ],
  );
  // 2023 mobile.
  t.same(
    filtersOf('serp/serp-parser-zlurad/mobile/coffee.html.gz')?.map((f) => [f.name, f.q]),
    [
      ['Benefits', 'benefits of coffee'],
      ['Nutrition facts', 'nutritional value of coffee'],
      ['Recipes', 'coffee recipes'],
      ['Types', 'coffee drink types'],
    ],
  );
});

t.test(
  'filter chips › tabs carrying uds are not filters; chips on the Images tab are',
  { skip: missing },
  async (t) => {
    // "Places" and "Places sites" (udm=1) keep the query "sushi": tabs, though they carry uds.
    t.same(
      filtersOf('serp/juremrzek-google-scraper/sushi.html.gz')?.map((f) => f.name),
      ['Menu', 'Types', 'Recipe', 'Open now', 'Ingredients'],
    );
    // "Images" and "Perspectives" (udm=2, udm=4) with uds, and nothing else: no filter at all.
    t.equal(filtersOf('serp/websearcher/2024-03-13_cistern_81f344a9684a.html.gz'), undefined);
    // 2026 Images tab (Korean): its 33 chips keep udm=2 and narrow the query.
    const cat = filtersOf('serp/debug-dumps-2025-2026/chstudio_2026-04-01_cat_images-udm2_ko.html.gz');
    t.equal(cat?.length, 33);
    t.same(
      cat?.slice(0, 4).map((f) => [f.name, f.q]),
      [
        ['캐릭터', '캐릭터 cat'],
        ['실루엣', 'cat 실루엣'],
        ['색칠 공부', '색칠 공부 cat'],
        ['Happy', 'happy cat'],
      ],
    );
    // Links with uds inside the results ("People also search for", kokoc 2024) are not chips.
    t.equal(filtersOf('serp/kokoc-google-parser/2024-05-06.decoded.html.gz'), undefined);
  },
);

t.test('filter chips › belong to the search: merged pages keep the first page’s', { skip: missing }, async (t) => {
  const html = readFixtureText('serp/websearcher/2025-02-06_barclays-job-cuts_ad1eb5594673.html.gz');
  const one = parse(html, { captureAio: false });
  if (one.kind !== 'serp') throw new Error(`fixture is ${one.kind}`);
  // Page 2 repeats the chips with links of its own (another `ved`): they are not three more filters.
  const again = (one.serp.serp_features.filters as Filter[]).map((f) => ({ ...f, link: `${f.link}&page=2` }));
  const merged = mergePages([
    { start: 0, serp: one.serp },
    { start: 10, serp: { ...one.serp, serp_features: { ...one.serp.serp_features, filters: again } } },
  ]);
  t.same(merged.serp_features.filters, one.serp.serp_features.filters);
  const compat = compatOf(
    { organic_results: [], serp_features: merged.serp_features, information: {} },
    { q: 'barclays job cuts' },
  );
  t.match(compat.filters, [{ name: 'Today', q: 'Barclays job cuts today' }], 'compat: top-level filters');
});
