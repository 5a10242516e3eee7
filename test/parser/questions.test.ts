import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { loadDom } from '../../parser/dom/index.js';
import { relatedQuestions } from '../../parser/features/questions.js';
import { parse } from '../../parser/index.js';
import { fixturesDir, fixturesMissing, listSerpPages, readFixtureText } from '../support/fixtures.js';

const missing = fixturesMissing();

type Question = Record<string, unknown>;

const questionsOf = (page: string): Question[] => {
  const out = parse(readFixtureText(page), { captureAio: true });
  if (out.kind !== 'serp') throw new Error(out.detail);
  return (out.serp.serp_features.related_questions as Question[] | undefined) ?? [];
};

// Values below were read by hand in the raw pages: in the `jsl.dh('<id>','…')` strings for plain HTTP captures
// (e.g. `Kak\xe1 wears \x3cb\x3eadidas Predator FT 30\x3c/b\x3e`), in the document for rendered ones.

t.test(
  'People also ask › 2024 plain HTTP page: the answer comes from the jsl.dh fragments',
  { skip: missing },
  async (t) => {
    // kaka-boots: the item holds only the question and `<div id="_4vzwZf3kHrih5NoP4bSC0A4_31">`; that id's script
    // inserts a frame whose `4vzwZf3kHrih5NoP4bSC0A4__28` the next script fills with the answer and its source.
    const qs = questionsOf('serp/websearcher/2024-03-13_kaka-boots_880beebb66bb.html.gz');
    t.same(qs[0], {
      question: 'What football boots does Kaka wear?',
      snippet: 'Kaká is a 41-year-old Midfielder. Kaká wears adidas Predator FT 30 soccer cleats in 2022-2023.',
      link: 'https://www.footballbootsdb.com/player/Kaka/3758/',
      title: 'Kaká - Football Boots Database',
      displayed_link: 'https://www.footballbootsdb.com › player › Kaka',
    });
    t.equal(qs.length, 4);
    t.ok(
      qs.every((q) => q.snippet && q.link && q.title),
      'every item has its answer',
    );
  },
);

t.test('People also ask › 2020 list and text answers with their dates (pizza, en)', { skip: missing }, async (t) => {
  const qs = questionsOf('serp/bs-serp-parser-spider/desktop.html.gz');
  // A list answer: its heading is the text above the list; "More items..." and the date sit under it.
  t.same(qs[1], {
    question: 'What is the best pizza ever?',
    snippet: "America's 15 best pizzas",
    list: [
      "Frank Pepe's, New Haven, Conn. ( ...",
      'Di Fara, Brooklyn, N.Y. (Di Fara Classic Pie) ...',
      'Pizzeria Bianco, Phoenix (Marinara) ...',
      'Una Pizza Napoletana, San Francisco (Margherita) ...',
      'Pizzeria Mozza, Los Angeles (squash blossoms, tomato, burrata) ...',
      "Roberta's, Brooklyn, N.Y. (Margherita) ...",
      "Sally's Apizza, New Haven, Conn. (",
    ],
    date: 'Nov 30, 2013',
    link: 'https://www.usatoday.com/story/travel/destinations/2013/11/30/best-pizza-in-america/3785309/',
    title: "America's 15 best pizzas - USA Today",
    displayed_link: 'www.usatoday.com › 2013/11/30 › best-pizza-in-america',
  });
  t.match(qs[2], {
    question: 'What comes in the Pizza Hut $20 Dinner Box?',
    snippet: /^The Big Dinner Box with Pasta includes two medium, one-topping rectangular pizzas/,
    date: 'Mar 3, 2017',
    link: 'https://www.chewboom.com/2017/03/03/pizza-hut-brings-back-big-dinner-box-19-99-just-time-march-madness/',
  });
});

t.test('People also ask › 2021 mobile table answer', { skip: missing }, async (t) => {
  const qs = questionsOf('serp/serp-parser-zlurad/mobile/old/_com-domains.html.gz');
  t.same(qs[1], {
    question: 'What is the price of a .com domain?',
    snippet: 'Wondering which registrars are worth your time?',
    table: [
      ['Registrar', '.com', '.org'],
      ['NameCheap', '$8.88/year', '$11.98/year'],
      ['GoDaddy', '$0.99/year', '$10.17/year'],
      ['HostGator', '$12.95/year', '$12.95/year'],
    ],
    date: 'Feb 10, 2021',
    link: 'https://www.websitebuilderexpert.com/building-websites/domain-name-cost/',
    title: 'How Much Does a Domain Name Cost? | Pricing Breakdown (2021)',
    displayed_link: 'https://www.websitebuilderexpert.com › ...',
  });
  // The 2021 mobile source is `h3 > a`, not `a > h3`.
  t.match(qs[0], {
    link: 'https://www.webstarts.com/blog/post/how-to-get-a-com',
    title: 'How To Get A .com - WebStarts',
  });
});

t.test('People also ask › 2023 Vietnamese page: local dates, a list answer', { skip: missing }, async (t) => {
  const qs = questionsOf('serp/nimble-google-scraper-ruby-goose97/programming_courses_3_top_1_bottom.html.gz');
  t.same(qs[1], {
    question: 'Is CS50 really for beginners?',
    snippet:
      "Yes. In fact, around two thirds of students who enroll in CS50 have never taken a computer science course before. So if you're new to the field and looking to learn the basics, you'll be in good company. That being said, don't expect the course to be easy.",
    date: '9 thg 1, 2023',
    link: 'https://www.freecodecamp.org/news/cs50-course-review/#:~:text=Yes.,the%20course%20to%20be%20easy.',
    title: "Review of CS50 – Harvard's Introduction to Computer Science ...",
    displayed_link: 'https://www.freecodecamp.org › cs50-course-review',
  });
  t.match(qs[2], {
    question: 'What courses to learn coding?',
    snippet: 'In summary, here are 10 of our most popular coding courses',
    list: ['Crash Course on Python: Google.', 'Python for Everybody: University of Michigan.'],
    link: 'https://www.coursera.org/courses?query=coding',
    title: 'Best Coding Courses & Certifications [2023] - Coursera',
  });
  t.equal((qs[2]?.list as string[] | undefined)?.length, 5, "the list's five items");
});

t.test('People also ask › 2020 Bosnian interface: dates as the page writes them', { skip: missing }, async (t) => {
  const qs = questionsOf('serp/bs-serp-parser-spider/tablet.html.gz');
  t.match(qs[1], {
    question: 'What is the most vegan friendly city?',
    snippet: /^London has been named the world's most vegan-friendly city/,
    date: '2. dec 2019.',
    link: 'https://www.cnbc.com/2019/12/02/london-ranked-as-top-city-globally-for-vegan-friendly-restaurants.html',
  });
});

t.test('People also ask › an element filled twice ends with the later markup (2024)', { skip: missing }, async (t) => {
  // president usa: `YDmdZtGFHsSQwbkPyoyzyAw__34` is first filled with an empty `<div id="…__34">`, then, ~40 kB later,
  // with the answer.
  const qs = questionsOf('serp/serp_parser-kjellberg-ruby/full_html_response.html.gz');
  t.match(qs[0], {
    question: 'Who is the current US president?',
    snippet: 'President Joe Biden poses for a selfie with workers in Phoenix, AZ.',
    title: 'Joe Biden: The President | The White House',
    link: /^https:\/\/www\.whitehouse\.gov\/administration\/president-biden\//,
  });
});

t.test('People also ask › 2025-12 calls with a double-quoted markup string', { skip: missing }, async (t) => {
  // jsl.dh('CelAadXVEeKli-gPlMHG4AY__24',"\x3cdiv class=\"wDYxhc\"…"): the id in single quotes, the markup in double.
  const qs = questionsOf(
    'serp/debug-dumps-2025-2026/gamersremorse_2025-12-16a_jedi-fallen-order-reception_en-IT.html.gz',
  );
  t.match(qs[1], {
    question: "Why won't Star Wars Jedi: Fallen Order launch?",
    snippet: /^If STAR WARS Jedi: Fallen Order still won't launch, you may have one or more corrupted game files/,
    date: '6 Nov 2023',
    link: /^https:\/\/www\.drivereasy\.com\/knowledge\/star-wars-jedi-fallen-order-not-launching\//,
    title: '[SOLVED] STAR WARS Jedi: Fallen Order Not Launching - Driver Easy',
  });
});

t.test('People also ask › rendered pages are read from the document', { skip: missing }, async (t) => {
  // pt-BR crawl-API capture (2025-03): the answers are in the document, the scripts already ran.
  t.same(questionsOf('serp/deepresearch-langgraph/google_serp_ai-tools_pt-BR.html.gz')[0], {
    question: 'O que é o Google AI?',
    snippet:
      'O Google AI Studio é um ambiente online experimental que permite aos usuários mergulhar no mundo da inteligência artificial (IA) do Google.',
    date: '24 de abr. de 2024',
    link: 'https://agenciaexplorer.com.br/blog/artigo/video-do-google-ia-studio-na-pratica/#:~:text=O%20Google%20AI%20Studio%20%C3%A9,artificial%20(IA)%20do%20Google.',
    title: 'Google Al Studio na prática - Blog - Agência Explorer',
    displayed_link: 'https://agenciaexplorer.com.br › blog › artigo › video-d...',
  });
  // 2026 selenium capture: two AI-written answers (aiQuestions.test.ts) and two web answers.
  const sky = questionsOf('serp/websearcher/2026-01-20_why-is-the-sky-blue_7049404a2dd6.html.gz');
  t.match(sky[0], { question: 'Why is the sky blue short answer?', type: 'ai_overview' });
  t.match(sky[2], {
    question: 'Why is the sky so blue right now?',
    snippet: /^In summer, the sun sits higher in the sky/,
    date: 'Oct 13, 2025',
    link: 'https://www.wsav.com/weather-news/why-the-sky-looks-bluer-in-fall-and-winter/',
    title: 'Why the sky looks bluer in fall and winter - WSAV-TV',
  });
});

/** WebSearcher's snapshot of a page's "People also ask" items, when it has one. */
const websearcherItems = (page: string): string[] | undefined => {
  const file = join(fixturesDir, page.replace(/\.html\.gz$/, '.expected.websearcher-snapshot.json'));
  let snapshot: { results?: Array<{ type?: string; details?: { items?: string[] } }> };
  try {
    snapshot = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  return snapshot.results?.find((r) => r.type === 'people_also_ask')?.details?.items;
};

t.test('People also ask › WebSearcher snapshots', { skip: missing }, async (t) => {
  // The snapshots list the items only (no answers). WebSearcher reads an item whose answer it finds in the document
  // by that answer's source ("Why the sky looks bluer in fall and winter - WSAV-TV WSAV-TV https://www.wsav.com ›
  // …" on 2026-01-20), so such an item must match our title and displayed link instead of the question.
  let compared = 0;
  for (const page of listSerpPages().filter((p) => p.startsWith('serp/websearcher/'))) {
    const items = websearcherItems(page);
    if (!items) continue;
    const qs = questionsOf(page);
    t.equal(qs.length, items.length, `${page}: as many items`);
    items.forEach((item, i) => {
      const q = qs[i] ?? {};
      const bySource =
        typeof q.title === 'string' && item.startsWith(q.title) && item.includes(String(q.displayed_link));
      t.ok(item === q.question || bySource, `${page} item ${i}: ${item.slice(0, 60)}`);
    });
    compared++;
  }
  t.ok(compared >= 20, `${compared} pages compared`);
});

const FIELDS = new Set([
  'question',
  'snippet',
  'title',
  'link',
  'displayed_link',
  'date',
  'list',
  'table',
  'type',
  'text_blocks',
  'references',
]);

t.test('People also ask › invariants over every fixture page', { skip: missing }, async (t) => {
  let answered = 0;
  for (const page of listSerpPages()) {
    const out = parse(readFixtureText(page), { captureAio: true });
    if (out.kind !== 'serp') continue;
    for (const q of (out.serp.serp_features.related_questions as Question[] | undefined) ?? []) {
      const where = `${page}: ${String(q.question)}`;
      const unknown = Object.keys(q).filter((k) => !FIELDS.has(k));
      if (unknown.length) t.fail(`${where}: fields ${unknown.join(', ')}`);
      for (const k of ['question', 'snippet', 'title', 'link', 'displayed_link', 'date']) {
        if (k in q && (typeof q[k] !== 'string' || !(q[k] as string).trim())) t.fail(`${where}: empty ${k}`);
      }
      if (q.snippet === q.question) t.fail(`${where}: snippet repeats the question`);
      if (q.link !== undefined && !/^https?:\/\/[^/\s]+/.test(String(q.link))) t.fail(`${where}: link ${q.link}`);
      if ((q.title !== undefined || q.displayed_link !== undefined) && q.link === undefined)
        t.fail(`${where}: a source without a link`);
      const list = q.list as unknown[] | undefined;
      if (list && (!list.length || !list.every((x) => typeof x === 'string' && x.trim()))) t.fail(`${where}: list`);
      const table = q.table as unknown[][] | undefined;
      if (table && (!table.length || !table.every((r) => Array.isArray(r) && r.some((c) => String(c).trim()))))
        t.fail(`${where}: table`);
      if (q.type !== undefined && (q.type !== 'ai_overview' || !Array.isArray(q.text_blocks) || q.link))
        t.fail(`${where}: an AI-written answer is an overview without a source result`);
      if (q.link) answered++;
    }
  }
  // 234 items have a source across the fixtures; 21 did before the deferred fragments were read.
  t.ok(answered >= 200, `${answered} items with a source`);
});

/** Escapes markup as Google writes it into a `jsl.dh` string: `\x3c`, `\x3d`, `\x22`… */
const js = (markup: string): string => markup.replace(/[\\<>="'&]/g, (c) => `\\x${c.charCodeAt(0).toString(16)}`);

const ITEM = '<div role="button" aria-controls="_T_1">Is it deferred?</div><div id="_T_1"></div>';
const FRAME = '<div class="IZE3Td"><div id="T__2"></div><div id="T__3"></div></div>';
const TEXT =
  '<div class="wDYxhc"><div data-attrid="wa:/description" role="heading"><span class="hgKElc">It is <b>deferred</b>.</span><span class="kX21rb">Jan 2, 2024</span></div></div>';
const SOURCE =
  '<div class="g"><div class="yuRUbf"><a href="/url?q=https://example.com/page&amp;sa=U"><h3>Example page</h3><cite>https://example.com › page</cite></a></div></div>';
const ANSWER = {
  question: 'Is it deferred?',
  snippet: 'It is deferred.',
  date: 'Jan 2, 2024',
  link: 'https://example.com/page',
  title: 'Example page',
  displayed_link: 'https://example.com › page',
};

/** A page with one item and its calls; in a double-quoted string Google writes `\"` where `'` strings have `\x22`. */
const page = (item: string, calls: Array<[string, string]>, quote = "'"): string => {
  const string = (markup: string) => (quote === '"' ? `"${markup.replace(/\\x22/g, '\\"')}"` : `'${markup}'`);
  const scripts = calls.map(([id, markup]) => `(function(){window.jsl.dh('${id}',${string(markup)});})();`);
  return `<html><body><div class="related-question-pair" data-q="Is it deferred?">${item}</div><div>results</div><script>${scripts.join('')}</script></body></html>`;
};

const answerOf = (html: string): Question | undefined => relatedQuestions(loadDom(html))?.[0];

t.test('People also ask › deferred fragments, on minimal pages', async (t) => {
  const calls: Array<[string, string]> = [
    ['_T_1', js(FRAME)],
    ['T__2', js(TEXT)],
    ['T__3', js(SOURCE)],
  ];
  t.same(answerOf(page(ITEM, calls)), ANSWER, 'frame, then its text and source blocks; /url?q= unwrapped');
  t.same(answerOf(page(ITEM, calls, '"')), ANSWER, 'markup strings in double quotes');
  t.same(
    answerOf(page(ITEM, [calls[0] as [string, string], ['T__2', js('<div id="T__2"></div>')], ...calls.slice(1)])),
    ANSWER,
    'an element filled with an empty copy of itself takes the later call',
  );
  t.same(
    answerOf(page(ITEM, [['_T_1', `${js(FRAME)}\\x4`], ...calls.slice(1)])),
    { question: 'Is it deferred?' },
    'a badly escaped string gives nothing rather than a guess',
  );
  // A rendered page keeps its scripts but has their markup in place: the document is read, the scripts are not.
  const rendered = ITEM.replace(
    '<div id="_T_1"></div>',
    `<div id="_T_1">${TEXT.replace('It is <b>deferred</b>.', 'Rendered.')}${SOURCE}</div>`,
  );
  t.same(answerOf(page(rendered, calls)), { ...ANSWER, snippet: 'Rendered.' }, 'a rendered item is read as it is');
});
