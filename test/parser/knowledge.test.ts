import t from 'tap';
import { parse } from '../../parser/index.js';
import { fixturesMissing, listSerpPages, readFixtureText } from '../support/fixtures.js';
import { compatOf } from './compare.js';

type Panel = Record<string, unknown>;

const featuresOf = (file: string): Record<string, unknown> => {
  const out = parse(readFixtureText(file), { captureAio: false });
  return out.kind === 'serp' ? out.serp.serp_features : {};
};

const kgOf = (file: string): Panel | undefined => featuresOf(file).knowledge_graph as Panel | undefined;

const othersOf = (file: string): Panel[] | undefined => featuresOf(file).other_knowledge_graphs as Panel[] | undefined;

const imagesOf = (kg: Panel | undefined): Array<{ image?: string; source?: string }> =>
  (kg?.header_images ?? []) as Array<{ image?: string; source?: string }>;

const missing = fixturesMissing();

t.test(
  'knowledge graph › the 2024 split panel: header at the top, body among the results',
  { skip: missing },
  async (t) => {
    // The title and subtitle sit in a `.kp-wholepage-osrp` header; description and facts in a `.kp-wholepage` block of
    // #rso. Only the title used to come out.
    t.match(kgOf('serp/websearcher/2024-03-13_oscar-the-grouch_7d621e868493.html.gz'), {
      title: 'Oscar the Grouch',
      type: 'Muppet character',
      description: /^Oscar the Grouch is a Muppet character created by Jim Henson and Jon Stone/,
      source: { name: 'Wikipedia', link: 'https://en.wikipedia.org/wiki/Oscar_the_Grouch' },
      created_by: 'Jim Henson; Jon Stone',
      first_appearance: 'Episode 0001 (November 10, 1969)',
    });
    t.match(kgOf('serp/websearcher/2024-03-13_mater-cars_054791556a3a.html.gz'), {
      title: 'Mater',
      type: 'Film character',
      first_appearance: 'Cars (2006)',
    });
  },
);

t.test('knowledge graph › fact keys keep combining marks; ids and types are checked', { skip: missing }, async (t) => {
  // Thai labels "ก่อตั้ง" (founded) and "สำนักงานใหญ่" (headquarters): their vowel marks are \p{M}, not \p{L}.
  t.match(kgOf('serp/nimble-elixir-topnimble/keyword_with_no_adwords.html.gz'), {
    title: 'Google',
    ก่อตั้ง: /^4 กันยายน 2541/,
    สำนักงานใหญ่: 'เมาน์เทนวิว, แคลิฟอร์เนีย, อเมริกา',
  });
  // A product panel's subtitle is its review count "(110)", not a type; a page-wide data-mid "/m/movie" and a
  // product id are not the entity's kgmid.
  const dell = kgOf('serp/serp-parser-zlurad/desktop/dell.html.gz');
  t.equal(dell?.title, 'Dell XPS 13-9350');
  t.notOk(dell && 'type' in dell, 'no type from "(110)"');
  t.notOk('kgmid' in (kgOf('serp/serp-parser-zlurad/mobile/coffee.html.gz') ?? {}), 'no kgmid "/m/movie"');
  t.equal(kgOf('serp/serp-parser-zlurad/desktop/coffee.html.gz')?.kgmid, '/m/0pl8ptc');
});

t.test(
  'knowledge graph › "See results about" is a list of other entities, not a panel',
  { skip: missing },
  async (t) => {
    t.same(kgOf('serp/websearcher/2025-02-06_metropolitan-los-angeles-area_bb50002482cc.html.gz'), {
      see_results_about: [
        {
          name: 'Greater Los Angeles',
          link: 'https://www.google.com/search?sca_esv=14324ad49b0ab5cb&q=Greater+Los+Angeles&si=APYL9bsJwbnVvCG4rXaxTIBRHHcA3k_zOcwMBstwJK2zMzfMFS8k1L0GRqI92ovk1bV-Wcu75uAN4gbCx-ixjt2DixoIhLqFQ18uFpT7PmJSdu2IaIs5e8pmqfM8gzf8-8Km00xdDpySlX3X9M5pIc3GcXSc6hREhHJ4r8PUh_wb6oaafZRAzDRh-6ka_PJmMVvwgTxCEo-MwWZAUKw6pvQvBZODDwxmPTztEH3lrtYKdfuwrWK3i55TIxqYfQWb1XMVa3vfDF4v&sa=X&ved=2ahUKEwig57rU-6-LAxV2klYBHTraOTAQ6RN6BAgUEAE',
          extensions: ['Area in California'],
        },
      ],
    });
    const spanish = kgOf('serp/websearcher/2023-html_pages/1684516032.html.gz');
    t.same(
      ((spanish?.see_results_about ?? []) as Array<{ name: string }>).map((i) => i.name),
      ['Aborto', 'Aborto espontáneo'],
    );
  },
);

t.test('knowledge graph › a local business is read by data-attrid, in any language', { skip: missing }, async (t) => {
  // Desktop layout, Thai: labelled facts ("ที่อยู่:", "โทรศัพท์:", "เวลาทำการ:"), rating "5.0" hidden from screen
  // readers, count in words ("รีวิว 3 รายการบน Google"), the week's hours collapsed behind today's line.
  const nimble = kgOf('serp/nimble-elixir-topnimble/keyword_with_top_adwords.html.gz');
  t.same(nimble, {
    title: 'Nimble',
    website: 'https://nimblehq.co/',
    type: 'บริษัทซอฟท์แวร์ในกรุงเทพมหานคร',
    address:
      '399 Interchange 21, Sukhumvit Road, 24th Floor, Room 2402-03, แขวง คลองเตยเหนือ เขตวัฒนา กรุงเทพมหานคร 10110',
    phone: '02 258 3649',
    hours: 'เปิด 24 ชั่วโมง',
    rating: 5,
    reviews: 3,
  });
  // Mobile layout: unlabelled facts, count in brackets "(137)", the open state beside the summary, phone and website
  // only in the row of buttons (the phone as the tel: number).
  t.same(kgOf('serp/serp-parser-zlurad/mobile/domain.html.gz'), {
    title: 'Domain Oakland',
    type: 'Apartment building in Oakland, California',
    address: '1389 Jefferson St, Oakland, CA 94612',
    phone: '+15108006138',
    rating: 3.4,
    reviews: 137,
    website: 'https://www.thedomainoakland.com/?utm_knock=ll&utm_source=gglocal&utm_medium=organic',
  });
  // Desktop puts the entity panel "Domain name" on top of the right column and the business below it: the top one
  // is reported, without the business's facts.
  const desktop = kgOf('serp/serp-parser-zlurad/desktop/domain.html.gz');
  t.match(desktop, { title: 'Domain name', type: 'Application programming interface' });
  for (const k of ['address', 'phone', 'hours', 'rating', 'reviews']) t.notOk(desktop && k in desktop, `no ${k}`);
});

t.test('knowledge graph › a second panel on the page comes in other_knowledge_graphs', { skip: missing }, async (t) => {
  // Desktop: the business sits below the entity in the right-hand column, with its labelled facts.
  t.same(othersOf('serp/serp-parser-zlurad/desktop/domain.html.gz'), [
    {
      title: 'Domain Oakland',
      website: 'https://www.thedomainoakland.com/?utm_knock=ll&utm_source=gglocal&utm_medium=organic',
      type: 'Apartment building in Oakland, California',
      address: '1389 Jefferson St, Oakland, CA 94612',
      phone: '(510) 800-6138',
      hours: 'Open ⋅ Closes 6 PM',
      rating: 3.4,
      reviews: 137,
    },
  ]);
  // Mobile: the business comes first among the results, the entity below it (with its own pictures).
  const mobile = othersOf('serp/serp-parser-zlurad/mobile/domain.html.gz');
  t.equal(mobile?.length, 1);
  t.match(mobile?.[0], {
    title: 'Domain name',
    type: 'Application programming interface',
    description: /^In the Internet, a domain name is a string that identifies a realm of administrative autonomy/,
    source: { name: 'Wikipedia', link: 'https://en.m.wikipedia.org/wiki/Domain_name' },
  });
  t.equal(imagesOf(mobile?.[0]).length, 11, "the entity's own eleven pictures, not the business's photo");
  t.notOk('address' in (mobile?.[0] ?? {}), "no business fact in the entity's panel");
  // One panel, or a panel and a "See results about" box: nothing more.
  t.equal(othersOf('serp/serp-parser-zlurad/desktop/coffee.html.gz'), undefined);
  t.equal(othersOf('serp/nimble-elixir-topnimble/keyword_with_top_adwords.html.gz'), undefined);
  // The compat output carries it at the top level under the same name.
  const features = featuresOf('serp/serp-parser-zlurad/desktop/domain.html.gz');
  const compat = compatOf({ organic_results: [], serp_features: features, information: {} }, { q: 'domain' });
  t.match(compat, {
    knowledge_graph: { title: 'Domain name', header_images: [{ source: 'https://en.wikipedia.org/wiki/Domain_name' }] },
    other_knowledge_graphs: [{ title: 'Domain Oakland', address: '1389 Jefferson St, Oakland, CA 94612' }],
  });
});

t.test("knowledge graph › the panel's own pictures are SerpApi's header_images", { skip: missing }, async (t) => {
  // 2023 desktop: four pictures inline (`data:`) and a fifth Google shows on scrolling the row (a gstatic URL),
  // each with the page it is from (`data-lpage`).
  const coffee = imagesOf(kgOf('serp/serp-parser-zlurad/desktop/coffee.html.gz'));
  t.same(
    coffee.map((i) => i.source),
    [
      'https://en.wikipedia.org/wiki/Coffee',
      'https://www.tastingtable.com/718678/coffee-brands-ranked-from-worst-to-best/',
      'https://www.healthline.com/nutrition/top-evidence-based-health-benefits-of-coffee',
      'https://www.health.harvard.edu/blog/the-latest-scoop-on-the-health-benefits-of-coffee-2017092512429',
      'https://www.tastingtable.com/794355/different-types-of-coffee-explained/',
    ],
  );
  for (const i of coffee.slice(0, 4)) t.match(i.image, /^data:image\/jpeg;base64,\/9j\/4AAQ/, 'an inline picture');
  t.equal(
    coffee[4]?.image,
    'https://encrypted-tbn0.gstatic.com/images?q=tbn:ANd9GcTfWpPUDBL9AWrANOJSorna-dMqhtYRtK8VhPYgoFfF3g&s',
  );
  // A licensed picture Google hosts has no page of its own: the picture only.
  const paris = imagesOf(kgOf('serp/serp-parser-zlurad/desktop/paris.html.gz'));
  t.equal(paris.length, 1);
  t.match(paris[0], { image: /^data:image\/jpeg;base64,/ });
  t.notOk('source' in (paris[0] ?? {}), 'no gstatic "source"');
  // A 2023 film panel: the trailer's still opens the row (an empty `data-lpage`) and is not a picture of it. The
  // row sits among the results and the description on the right; both belong to the panel.
  const film = kgOf('serp/serp-parser-zlurad/desktop/old/matrix.html.gz');
  t.same(
    imagesOf(film).map((i) => i.source),
    [
      'https://www.imdb.com/title/tt0133093/',
      'https://www.theguardian.com/film/2019/mar/28/the-matrix-20th-anniversary-sci-fi-game-changer',
      'https://www.esquire.com/entertainment/movies/a28764367/keanu-reeves-matrix-4/',
    ],
  );
  t.match(film, { description: /^Neo \(Keanu Reeves\) believes that Morpheus/, release_date: 'March 31, 1999 (USA)' });
  t.match(kgOf('serp/serp-parser-zlurad/desktop/matrix.html.gz'), {
    title: 'The Matrix',
    type: 'Film franchise',
    description: /^The Matrix is an American media franchise/,
    directors: 'Lilly Wachowski, Lana Wachowski',
    header_images: [{ source: 'https://www.imdb.com/title/tt0133093/' }],
  });
  // 2025 (Japanese): the header above the results, pictures and description in the right-hand column.
  const tokyo = kgOf('serp/search-navigator/20250525_all_tokyo_9.html.gz');
  t.match(tokyo, {
    title: '場の量子論 (Quantum field theory)',
    description: /^理論物理学において、場の量子論は、量子化された場の性質を扱う理論である。/,
    source: { name: 'ウィキペディア' },
  });
  t.same(
    imagesOf(tokyo).map((i) => i.source),
    [
      'https://www.ipmu.jp/en/research-activities/research-program/quantum-field-theory',
      'https://plato.stanford.edu/entries/quantum-field-theory/',
      'https://www.youtube.com/watch?v=PjvLWf-qWAQ',
      'https://www.bluequbit.io/quantum-field-theory',
    ],
  );
  // 2024 split panel: the row is in the header block on the right.
  t.equal(
    imagesOf(kgOf('serp/websearcher/2024-03-13_cistern_81f344a9684a.html.gz'))[2]?.source,
    'https://www.esf.edu/ere/endreny/GICalculator/CisternsIntro.html',
  );
  // Mobile 2023: two pictures the page loads later by script are not in it; their pages are.
  const mobile = imagesOf(kgOf('serp/serp-parser-zlurad/mobile/_com-domains.html.gz'));
  t.same(mobile.slice(0, 2), [
    { source: 'https://www.verisign.com/en_US/domain-names/what-does-com-mean/index.xhtml' },
    { source: 'https://www.ionos.com/domains/com-domain' },
  ]);
  t.match(mobile[2], {
    image: /^https:\/\/encrypted-tbn0\.gstatic\.com\/images\?q=tbn:/,
    source: 'https://www.ionos.co.uk/domains/com-domain',
  });
  // A business panel's photos and map are not the entity pictures SerpApi lists there.
  t.notOk('header_images' in (kgOf('serp/nimble-elixir-topnimble/keyword_with_top_adwords.html.gz') ?? {}));
});

t.test('knowledge graph › invariants on every fixture page', { skip: missing }, async (t) => {
  let panels = 0;
  for (const page of missing ? [] : listSerpPages()) {
    const kg = kgOf(page);
    if (!kg) continue;
    panels++;
    if (kg.see_results_about) continue;
    if (typeof kg.title !== 'string' || !kg.title) t.fail(`${page}: no title`);
    for (const panel of [kg, ...(othersOf(page) ?? [])]) {
      if (panel.kgmid !== undefined && !/^\/[mg]\/[0-9a-z_]+$/.test(String(panel.kgmid)))
        t.fail(`${page}: kgmid ${panel.kgmid}`);
      for (const k of Object.keys(panel)) if (/^_|_$|__/.test(k)) t.fail(`${page}: key ${k}`);
      for (const i of imagesOf(panel)) {
        if (!i.image && !i.source) t.fail(`${page}: an empty header image`);
        if (i.source !== undefined && !/^https?:\/\//.test(i.source))
          t.fail(`${page}: header image source ${i.source}`);
        if (i.image !== undefined && !/^(?:https?:\/\/|data:image\/)/.test(i.image))
          t.fail(`${page}: image ${i.image}`);
      }
    }
  }
  t.ok(panels >= 40, `checked ${panels} panels`);
});
