import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PageKind } from '../../services/crawler/parser/index.js';
import { fixturesDir } from '../support/fixtures.js';

/**
 * Other parsers' expected outputs (SOURCES.md), normalised to what this parser can be compared on: page kind,
 * the ordered organic links, organic count, a few links/titles by index, result estimate and which features exist.
 * Each field is only set where the other parser's own test pins it.
 */
export interface Expectation {
  file: string;
  kind?: PageKind;
  organicLinks?: string[];
  organicCount?: number;
  organicAt?: Array<{ index: number; link?: string; title?: string }>;
  totalResults?: number;
  timeTaken?: number;
  features?: Record<string, boolean>;
  /** A news-tab page (`tbm=nws`): how many articles `serp_features.news_results` holds (and no organic results). */
  newsCount?: number;
  /** Set when CORRECTIONS replaced part of the other parser's answer: why. */
  corrected?: string;
}

/** WebSearcher component types → our `serp_features` names (DESIGN.md §6). */
const WEBSEARCHER_FEATURES: Record<string, string> = {
  people_also_ask: 'related_questions',
  knowledge: 'knowledge_graph',
  searches_related: 'related_searches',
  videos: 'inline_videos',
  top_stories: 'top_stories',
  local_results: 'local_results',
  ad: 'ads',
  perspectives: 'perspectives',
  discussions_and_forums: 'discussions_and_forums',
  recipes: 'recipes_results',
  twitter_cards: 'twitter_results',
  jobs: 'jobs_results',
  ai_overview: 'ai_overview',
};

/** serp-parser's Serp members → our feature names. */
const ZLURAD_FEATURES: Record<string, string> = {
  relatedKeywords: 'related_searches',
  topStories: 'top_stories',
  videos: 'inline_videos',
  adwords: 'ads',
  locals: 'local_results',
};

const readJson = (path: string): unknown => JSON.parse(readFileSync(path, 'utf8'));

/**
 * Where another parser's expected output is wrong, for a reason visible in the page, the right answer replaces it
 * (merged over the transcribed expectation). Each entry says why.
 */
const CORRECTIONS: Record<string, Partial<Expectation> & { why: string }> = {
  // bs-serp-parser takes every `div.mnr-c.xpd` in #rso as a result, but on this page three of them are wrappers
  // around two results from the same site (la.eater.com, theinfatuation.com, m.yelp.com), each of which is also a
  // `div.mnr-c.xpd`. Its own test asserts the wrapper's glued title ("…Eater LA14 Best Vegan…") as result 0, so
  // its 13 are the 10 results plus 3 wrappers.
  'serp/bs-serp-parser-spider/tablet.html.gz': {
    why: 'same-site wrappers counted as results',
    organicCount: 10,
  },
  // The spec's related-keyword assertions (3 of them, links with ved=2ahUKEwivoKacpvvwAhX4JzQIHQ…) were written for
  // the 2021 page now kept as mobile/old/google.html: that ved token occurs only there, and the parser returns exactly
  // those three there (pages.test.ts, "2021 mobile layout"). This 2023 page renders no
  // related searches; its "People also search for" boxes exist only as escaped HTML inside scripts, shown after a
  // user comes back from a result.
  'serp/serp-parser-zlurad/mobile/google.html.gz': {
    why: 'related searches asserted from an older capture',
    features: { related_searches: false },
  },
  // kjellberg's parser files the featured snippet (the card with the "Om utvalda utdrag" help link) as organic
  // result 1; it is the answer box (SerpApi's `answer_box`, type organic_result), as on every other layout here. Its
  // featured-snippet selector also matches the "Bilder" image pack, whose link is a google.se/search URL. So its 100
  // are 98 results + the snippet + the image pack, and the first organic result is the linasmatkasse.se page.
  'serp/serp_parser-kjellberg-ruby/2024-09-06-matkasse-goteborg.html.gz': {
    why: 'featured snippet and image pack counted as organic',
    organicCount: 98,
    organicAt: [
      {
        index: 0,
        link: 'https://www.linasmatkasse.se/info/matkassar-i-Goteborg',
        title: 'Goda och inspirerande matkassar i Göteborg',
      },
    ],
    features: { answer_box: true },
  },
  // As above: the "Bilder" image pack (a link to google.se/search) is counted as a result, so 100 = 99 + 1.
  'serp/serp_parser-kjellberg-ruby/2024-09-06-matkasse.html.gz': {
    why: 'image pack counted as organic',
    organicCount: 99,
  },
};

/** `serp/a/b.html.gz` → the expected files that may lie beside it, with CORRECTIONS applied. */
export const expectationFor = (page: string): Expectation | undefined => {
  const e = transcribed(page);
  const fix = CORRECTIONS[page];
  if (!e || !fix) return e;
  const { why, ...right } = fix;
  return { ...e, ...right, features: { ...e.features, ...right.features }, corrected: why };
};

const transcribed = (page: string): Expectation | undefined => {
  const base = join(fixturesDir, page.replace(/(\.decoded)?\.html\.gz$/, ''));
  const snap = [`${base}.expected.websearcher-snapshot.json`, `${base}.expected.websearcher-snapshot-2023.json`].find(
    existsSync,
  );
  if (snap) return fromWebsearcher(page, readJson(snap));
  const assertions = `${base}.expected-assertions.json`;
  if (existsSync(assertions)) return fromAssertions(page, readJson(assertions) as Record<string, unknown>);
  const fragment = `${base}.json`;
  if (existsSync(fragment)) return fromKjellbergFragment(page, readJson(fragment) as Record<string, unknown>);
  if (page.includes('/js-challenge-pages/')) return { file: page, kind: 'js_challenge' };
  if (page.endsWith('sorry_index.html.gz')) return { file: page, kind: 'captcha' };
  return undefined;
};

interface WsResult {
  type: string;
  url?: string | null;
  title?: string | null;
}

const fromWebsearcher = (file: string, data: unknown): Expectation => {
  const results: WsResult[] = Array.isArray(data) ? data : ((data as { results: WsResult[] }).results ?? []);
  const general = results.filter((r) => r.type === 'general');
  const features: Record<string, boolean> = {};
  for (const name of Object.values(WEBSEARCHER_FEATURES)) features[name] = false;
  for (const r of results) {
    const name = WEBSEARCHER_FEATURES[r.type];
    if (name) features[name] = true;
  }
  // WebSearcher files some right-hand entity panels as `side_bar` rather than `knowledge` (prouve: a person panel
  // with born/died facts; metropolitan LA: a "See results about" entity card). SerpApi reports those as
  // knowledge_graph, so on such pages its absence is not asserted.
  if (results.some((r) => r.type === 'side_bar') && !features.knowledge_graph) delete features.knowledge_graph;
  const f = Array.isArray(data) ? undefined : (data as { features?: Record<string, number> }).features;
  return {
    file,
    kind: 'serp',
    organicLinks: general.map((r) => r.url ?? '').filter(Boolean),
    organicCount: general.length,
    ...(f?.result_estimate_count ? { totalResults: f.result_estimate_count } : {}),
    // The 2023 snapshots hold only result rows, not which blocks were absent: presence is all they pin.
    features: Array.isArray(data) ? Object.fromEntries(Object.entries(features).filter(([, v]) => v)) : features,
  };
};

interface ZAssertion {
  actual: string;
  matcher: string;
  expected?: unknown;
}

const fromAssertions = (file: string, d: Record<string, unknown>): Expectation => {
  if (Array.isArray(d.blocks)) return fromZlurad(file, d.blocks as Array<{ assertions: ZAssertion[] }>);
  const a = (d.assertions ?? {}) as Record<string, unknown>;
  const e: Expectation = { file };
  if (a.is_recaptcha_suspicious_traffic === true) e.kind = 'captcha';
  if (typeof a.page_type === 'string' && a.page_type.startsWith('consent')) e.kind = 'consent';
  if (typeof a.parser_should_raise === 'string' && a.parser_should_raise.includes('502')) e.kind = 'error';
  if (typeof a.sn_count === 'number') e.organicCount = a.sn_count;
  if (typeof a.organic_count === 'number') e.organicCount = a.organic_count;
  if (typeof a.pc === 'number' && a.pc > 0) e.totalResults = a.pc;
  if (typeof a.total_results === 'number') e.totalResults = a.total_results;
  const at: Expectation['organicAt'] = [];
  for (const [k, v] of Object.entries(a)) {
    const sn = /^sn\[(\d+)\]$/.exec(k);
    if (sn && v && typeof v === 'object') {
      const o = v as { t?: string; u?: string; s?: string };
      // KokocGroup's parser is wrong on two counts, both visible in the HTML: it cuts the target out of
      // `/url?…&url=X&ved=…` as raw text, so its links keep `&ved=…&usg=…`, and its title is the text of the whole
      // anchor, so the site name (`s`) is glued to the end ("…Shampoo 250OZON"). The right answers are asserted.
      const link = o.u?.replace(/&ved=.*$/, '');
      const title = o.s && o.t?.endsWith(o.s) ? o.t.slice(0, -o.s.length) : o.t;
      at.push({ index: Number(sn[1]), ...(link ? { link } : {}), ...(title ? { title } : {}) });
    }
    const org = /^organic\[(\d+)\]\.(url|title)$/.exec(k);
    if (org && typeof v === 'string') at.push({ index: Number(org[1]), [org[2] === 'url' ? 'link' : 'title']: v });
  }
  if (at.length) e.organicAt = at;
  if (typeof a.related_questions_count === 'number') e.features = { related_questions: a.related_questions_count > 0 };
  if (typeof a.number_of_adwords_advertisers === 'number')
    e.features = { ...e.features, ads: a.number_of_adwords_advertisers > 0 };
  if (typeof a.ads_total === 'number') e.features = { ...e.features, ads: a.ads_total > 0 };
  // search-navigator counts the result anchors of one tab; on its news tab those are the articles (`news_results`).
  if (a.tab === 'news' && typeof a.result_count === 'number') {
    e.newsCount = a.result_count;
    e.organicCount = 0;
  }
  if (e.organicCount !== undefined || at.length) e.kind = e.kind ?? 'serp';
  return e;
};

/** Only the first describe block: later ones in serp-parser's specs run against other inputs (options off). */
const fromZlurad = (file: string, blocks: Array<{ assertions: ZAssertion[] }>): Expectation => {
  const e: Expectation = { file, kind: 'serp', features: {} };
  const at: NonNullable<Expectation['organicAt']> = [];
  for (const { actual, matcher, expected } of blocks[0]?.assertions ?? []) {
    const m = /^serp\.organic\[(\d+)\]\.(url|title)$/.exec(actual);
    if (m && matcher === 'toBe' && typeof expected === 'string')
      at.push({ index: Number(m[1]), [m[2] === 'url' ? 'link' : 'title']: expected });
    if (actual === 'serp.organic' && matcher === 'toHaveLength') e.organicCount = expected as number;
    if (actual === 'serp.totalResults' && matcher === 'toBe') e.totalResults = expected as number;
    if (actual === 'serp.timeTaken' && matcher === 'toBe') e.timeTaken = expected as number;
    if (actual === 'serp.error' && matcher === 'toBe' && /captcha/i.test(String(expected))) e.kind = 'captcha';
    const feature = ZLURAD_FEATURES[actual.replace(/^serp\./, '').replace(/[?.].*$/, '')];
    if (feature && e.features) {
      if (/toHaveLength/.test(matcher)) e.features[feature] = (expected as number) > 0;
      else if (/^(toBeDefined)$/.test(matcher)) e.features[feature] = true;
      else if (/^(toBeUndefined|not\.toHaveProperty|not\.toBeDefined)$/.test(matcher) && !actual.includes('.adwords'))
        e.features[feature] = false;
    }
  }
  if (at.length) e.organicAt = at;
  return e;
};

const fromKjellbergFragment = (file: string, d: Record<string, unknown>): Expectation => ({
  file,
  kind: 'serp',
  organicCount: 1,
  organicAt: [{ index: 0, link: d.url as string, title: d.title as string }],
});
