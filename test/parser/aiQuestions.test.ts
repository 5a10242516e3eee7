import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { serpOfFixture } from './compare.js';

/**
 * AI-written "People also ask" answers (2026 rendered pages; 2025 pages fetched without JavaScript, where they are
 * deferred three fragment levels down): SerpApi's `type: "ai_overview"` item with the overview's `text_blocks` and
 * `references`, and its opening paragraph as `snippet`. Values read by hand in the pages.
 */
type Block = { type: string; snippet?: string; reference_indexes?: number[]; list?: Array<Record<string, unknown>> };
type Question = {
  question: string;
  type?: string;
  snippet?: string;
  link?: string;
  text_blocks?: Block[];
  references?: Array<Record<string, unknown>>;
};

const WS = 'serp/websearcher';
const questionsOf = (page: string): Question[] =>
  (serpOfFixture(`${WS}/${page}`, { captureAio: true }).serp_features.related_questions ?? []) as Question[];

t.test(
  'People also ask › AI-written answers › 2026-01: text, collapsed items and sources',
  { skip: fixturesMissing() },
  async (t) => {
    const qs = questionsOf('2026-01-20_why-is-the-sky-blue_7049404a2dd6.html.gz');
    t.same(
      qs.map((q) => q.type ?? 'web'),
      ['ai_overview', 'ai_overview', 'web', 'web'],
      'two AI-written answers, then two answers from a web page',
    );
    const short = qs[0] as Question;
    t.match(short.snippet, /^The sky is blue because gas molecules in Earth's atmosphere scatter blue light/);
    t.notOk(short.link, 'an AI-written answer has no source result');
    t.same(
      short.text_blocks?.map((b) => b.type),
      ['paragraph', 'list'],
      'the paragraph and the list; the videos beside them are no text',
    );
    t.equal(short.text_blocks?.[0]?.snippet, short.snippet, 'the snippet is the opening paragraph');
    // One item shows, three are behind "Show more" (aria-hidden, marked `ahbak`): all four are the answer.
    t.same(
      short.text_blocks?.[1]?.list?.map((i) => i.title),
      ['Sunlight contains all colors', 'Atmosphere scatters blue', 'We see scattered blue', 'Why not violet?'],
    );
    t.equal(short.references?.length, 7, "the item's own source tray");
    t.match(short.references?.[0], {
      index: 0,
      title: 'Why Is the Sky Blue? - noaa nesdis',
      link: /^https:\/\/www\.nesdis\.noaa\.gov\/about\/k-12-education\/atmosphere\/why-the-sky-blue/,
    });
    t.same(short.text_blocks?.[0]?.reference_indexes, [0, 1, 2, 3, 5], "the paragraph's chips, by the page's model");
    const kid = qs[1] as Question;
    t.equal(kid.question, 'How to explain to a kid why the sky is blue?');
    t.notOk(
      kid.text_blocks?.some((b) => /YouTube ·/.test(b.snippet ?? '')),
      'a video card in the answer is not a paragraph',
    );
    t.equal(kid.references?.length, 7);
  },
);

t.test(
  'People also ask › AI-written answers › 2026-02: three answers without a source tray',
  { skip: fixturesMissing() },
  async (t) => {
    const qs = questionsOf('2026-02-05_why-is-the-sky-blue_45b6e019bfa2.html.gz');
    t.same(
      qs.map((q) => q.type ?? 'web'),
      ['ai_overview', 'ai_overview', 'ai_overview', 'web'],
    );
    const color = qs[1] as Question;
    t.equal(color.question, 'What is the true color of our sky?');
    t.same(
      color.text_blocks?.map((b) => (b.type === 'list' ? `list of ${b.list?.length}` : b.type)),
      ['paragraph', 'heading', 'list of 2', 'heading', 'list of 2', 'paragraph'],
    );
    t.equal(color.text_blocks?.[1]?.snippet, 'Why It Looks Blue (Daytime):');
    t.notOk('references' in color, 'no sources are on the page for these answers: none are reported');
    t.equal(qs[3]?.link, 'https://www.youtube.com/watch?v=VrDDGqruXmE', 'the last item is a web answer');
  },
);

t.test(
  "People also ask › AI-written answers › an item's overview is not the page's",
  { skip: fixturesMissing() },
  async (t) => {
    const serp = serpOfFixture(`${WS}/2026-01-20_why-is-the-sky-blue_7049404a2dd6.html.gz`, { captureAio: true });
    t.match(serp.ai_overview?.text_blocks[0], { snippet: /^The sky is blue due to Rayleigh scattering/ });
    // 2024 pages: no item is AI-written, so none has the type.
    const pasta = serpOfFixture('serp/websearcher/2024-03-13_biscuit-and-gravy-recipe_b938dae25618.html.gz');
    const items = (pasta.serp_features.related_questions ?? []) as Question[];
    t.ok(items.length > 0, 'the page has items');
    t.notOk(
      items.some((q) => q.type),
      'no AI-written answer on a page without one',
    );
  },
);

t.test(
  'People also ask › AI-written answers › 2025 pages fetched without JavaScript: the third deferred level',
  { skip: fixturesMissing() },
  async (t) => {
    // The item's frame holds a frame holding the overview; its source list is deferred one level further down. The
    // chips tie sentences to sources through the page's models, as for the page's own overview.
    const la = questionsOf('2025-02-06_metropolitan-los-angeles-area_bb50002482cc.html.gz');
    const area = la[0] as Question;
    t.equal(area.question, 'What is considered a metropolitan area?');
    t.equal(area.type, 'ai_overview');
    t.match(area.snippet, /^A metropolitan area is a large city and its surrounding suburbs, or counties, that are/);
    t.notOk(area.link, 'no source result is made up');
    t.same(
      area.text_blocks?.find((b) => b.type === 'list')?.list?.map((i) => i.title),
      ['Urbanized area', 'Adjacent counties', 'Commuting ties'],
    );
    t.same(
      area.references?.map((r) => r.title),
      [
        'Metropolitan Areas - Census.gov',
        'How is a metropolitan area defined? - Bureau of Economic Analysis',
        'Greater Los Angeles - Wikipedia',
      ],
    );
    // "The Los Angeles area is a classic example … edge cities" cites the Wikipedia page on Greater Los Angeles.
    const last = area.text_blocks?.at(-1);
    t.match(last, {
      snippet: /^The Los Angeles area is a classic example of a metropolitan area\./,
      reference_indexes: [2],
    });
    t.match(la[1], {
      link: 'https://www.whittier.edu/about/area',
      title: 'Greater Los Angeles Area - Whittier College',
    });

    const bible = questionsOf('2025-02-06_problems-with-bible-translations_2d6557bbff20.html.gz');
    t.same(
      bible.map((q) => q.type ?? 'web'),
      ['web', 'ai_overview', 'ai_overview', 'ai_overview'],
      'the first answer is from a web page, the three others AI-written',
    );
    t.equal(bible[0]?.link, 'http://translationjournal.net/journal/18bible.htm');
    const debated = bible[1] as Question;
    t.equal(debated.snippet, 'The King James Version of the Bible has been a subject of much debate.');
    t.same(
      debated.references?.map((r) => r.title),
      [
        'Bible version debate - Wikipedia',
        'King James Only movement - Wikipedia',
        'Vulgate - Wikipedia',
        'Literal Standard Version - Wikipedia',
      ],
    );
    // Each list item cites its own source: the King James Only sentence the page on that movement, the Literal
    // Standard Version and the Vulgate their own pages.
    const lists = debated.text_blocks?.filter((b) => b.type === 'list') ?? [];
    t.same(
      lists.map((b) => b.list?.map((i) => i.reference_indexes)),
      [
        [[0], [0], [0], [0], [1]],
        [[3], [2]],
      ],
    );
    t.same(
      lists[1]?.list?.map((i) => i.title),
      ['Literal Standard Version', 'Vulgate'],
    );
    t.equal(bible[2]?.references?.length, 6);
    t.match(bible[3]?.snippet, /^The New American Standard Bible \(NASB\) and the Literal Standard Version \(LSV\)/);
  },
);
