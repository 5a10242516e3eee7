import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OrganicResult } from '../../contracts/result.js';
import { isGoogleInternal, unwrapLink } from '../../parser/dom.js';
import type { PageKind } from '../../parser/index.js';
import { fixturesDir } from '../support/fixtures.js';
import { normLink } from './compare.js';

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
  /** Per-result fields the other parser pins (snippet, displayed host, date, rating, sitelinks). */
  fields?: FieldPin[];
  /** Set when CORRECTIONS replaced part of the other parser's answer: why. */
  corrected?: string;
  /** One entry per field pin that FIELD_CORRECTIONS replaced or dropped: why. */
  fieldsCorrected?: string[];
}

/** The per-result fields compared with other parsers (SerpApi's names; `rating` is `rich_snippet`'s). */
export const FIELD_NAMES = ['snippet', 'displayed_link', 'date', 'rating', 'sitelinks'] as const;
export type FieldName = (typeof FIELD_NAMES)[number];

/** One sitelink as the source has it, by its position among the result's sitelinks (only what it asserts). */
export interface SitelinkPin {
  at: number;
  title?: string;
  link?: string;
  /** serp-parser's type: INLINE (a row of links) or CARD (titled cards), SerpApi's `inline` / `expanded`. */
  inline?: boolean;
}

/**
 * One field of one result as another parser pins it. The result is ours with `link` where the source names it,
 * else ours at `index` (0-based). Only one of the value members is set, and only what the source asserts.
 */
export interface FieldPin {
  field: FieldName;
  index: number;
  link?: string;
  /** snippet: the whole text; displayed_link: a host; date: an ISO date or the date as shown. */
  text?: string;
  /** snippet: the source asserts only that the text holds each of these. */
  parts?: string[];
  /** snippet: WebSearcher joins element texts with spaces (and glues some), so spacing is no part of its answer. */
  ignoreSpacing?: boolean;
  /** The field is there (true) or not (false); nothing more is pinned. */
  present?: boolean;
  rating?: { value: number; reviews?: number };
  sitelinks?: { count?: number; items?: SitelinkPin[] };
}

/** WebSearcher component types → our `serp_features` names (docs/api.md#outputs). */
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
  buying_guide: 'buying_guide',
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

/**
 * Where another parser's per-result field is wrong for a reason visible in the page, its pin is replaced by what the
 * page shows (`pin` merged over it, or a function of it; `index`/`link` in `pin` re-point it to another result) or
 * dropped (`pin: null`) when the assertion is about something that is no organic result. The transcribed pin is
 * found by the source's index or link, or (`each`) every pin of that field on the page. Each entry says why.
 */
interface FieldCorrection {
  field: FieldName;
  index?: number;
  link?: string;
  each?: true;
  pin: Partial<FieldPin> | ((old: FieldPin) => FieldPin) | null;
  why: string;
}

/** Google's 2025–26 snippets end in a "Read more" link to the passage (`a.vzmbzf`, a `#:~:text=` link). */
const withoutReadMore = (old: FieldPin): FieldPin => ({ ...old, text: old.text?.replace(/\s*Read more$/, '') });

const FIELD_CORRECTIONS: Record<string, FieldCorrection[]> = {
  // Google renders a result's header twice (the second copy, `.B6fmyf`, is hidden), so the page has two identical
  // `cite`s per result; bs-serp-parser reads the text of both.
  'serp/bs-serp-parser-spider/desktop.html.gz': [
    { field: 'displayed_link', index: 0, pin: { text: 'www.pizzahut.com' }, why: 'both header copies glued' },
  ],
  // Its result 0 is the wrapper of two la.eater.com results (CORRECTIONS above), whose displayed links it glues.
  'serp/bs-serp-parser-spider/tablet.html.gz': [
    { field: 'displayed_link', index: 0, pin: { text: 'la.eater.com' }, why: 'two results’ displayed links glued' },
  ],
  // As with mobile/google's related searches: the spec's first-sitelink assertion ("Account", ved
  // 2ahUKEwjs8e-35ansAhWI3OAKHd2sBaIQ…) was written for the 2021 capture now kept as nojs/old/google-nojs.html, the
  // only page holding that ved token. On this 2023 page the first result's links are Google device · Docs · Drive ·
  // Images.
  'serp/serp-parser-zlurad/nojs/google-nojs.html.gz': [
    {
      field: 'sitelinks',
      index: 0,
      pin: {
        sitelinks: { items: [{ at: 0, title: 'Google device', link: 'https://www.google.com/device', inline: true }] },
      },
      why: 'first sitelink asserted from an older capture',
    },
  ],
  // kjellberg's organic[0] here is the featured snippet (matkassen.nu, see CORRECTIONS): its snippet pin is about the
  // answer box. Its organic[9], the result with 4 sitelinks, is therefore the 9th organic result, linasmatkasse.se.
  'serp/serp_parser-kjellberg-ruby/2024-09-06-matkasse-goteborg.html.gz': [
    { field: 'snippet', index: 0, pin: null, why: 'the asserted description is the featured snippet’s' },
    {
      field: 'sitelinks',
      index: 9,
      pin: { index: 8, link: 'https://www.linasmatkasse.se/' },
      why: 'index counts the featured snippet',
    },
  ],
  // WebSearcher reads the rating from the stars' aria-label ("Rated 5.0 out of 5,"), which describes the drawing,
  // rounded to half stars (the filled span is 5 stars wide for a 4.8). The text beside the stars is the rating:
  // "Rating: 4.8 · 1,280 votes" and "Rating: 4.8 · 20 votes" (the other four results say "Rating: 5").
  'serp/websearcher/2024-03-13_biscuit-and-gravy-recipe_b938dae25618.html.gz': [
    {
      field: 'rating',
      link: 'https://www.allrecipes.com/recipe/216391/easy-sausage-gravy-and-biscuits/',
      pin: { rating: { value: 4.8, reviews: 1280 } },
      why: 'the stars’ rounded aria-label read as the rating',
    },
    {
      field: 'rating',
      link: 'https://www.browneyedbaker.com/buttermilk-biscuits-with-sausage-gravy/',
      pin: { rating: { value: 4.8, reviews: 20 } },
      why: 'the stars’ rounded aria-label read as the rating',
    },
  ],
  // A journal article's snippet starts with its byline and year ("by Y Conwell · 2022 — "): the date is the year.
  'serp/websearcher/2025-02-06_my-work-is-done-why-wait_86cc98fe45fc.html.gz': [
    {
      field: 'date',
      link: 'https://www.ajgponline.org/article/S1064-7481(22)00525-5/abstract',
      pin: { text: '2022' },
      why: 'the byline kept in the date',
    },
  ],
  'serp/websearcher/2026-01-20_why-is-the-sky-blue_7049404a2dd6.html.gz': [
    { field: 'snippet', each: true, pin: withoutReadMore, why: 'the “Read more” link kept in the snippet' },
  ],
};

const applyFieldCorrections = (page: string, e: Expectation): Expectation => {
  const fixes = FIELD_CORRECTIONS[page];
  if (!fixes) return e;
  let fields = e.fields ?? [];
  const whys: string[] = [];
  for (const fix of fixes) {
    const hit = (p: FieldPin) =>
      p.field === fix.field && (fix.each || (fix.link !== undefined ? p.link === fix.link : p.index === fix.index));
    const replace = (p: FieldPin): FieldPin | undefined =>
      fix.pin === null ? undefined : typeof fix.pin === 'function' ? fix.pin(p) : { ...p, ...fix.pin };
    let changed = 0;
    fields = fields.flatMap((p) => {
      if (!hit(p)) return [p];
      const next = replace(p);
      if (next && JSON.stringify(next) === JSON.stringify(p)) return [p];
      changed++;
      return next ? [next] : [];
    });
    // A correction that changes no pin is stale: the transcription or the expected file changed under it.
    if (!changed) throw new Error(`${page}: the ${fix.field} correction (${fix.why}) changes no pin`);
    whys.push(`${fix.field} of ${fix.each ? `${changed} results` : (fix.link ?? `result ${fix.index}`)}: ${fix.why}`);
  }
  return { ...e, fields, fieldsCorrected: whys };
};

/** `serp/a/b.html.gz` → the expected files that may lie beside it, with CORRECTIONS applied. */
export const expectationFor = (page: string): Expectation | undefined => {
  const found = transcribed(page);
  if (!found) return undefined;
  const e = applyFieldCorrections(page, found);
  const fix = CORRECTIONS[page];
  if (!fix) return e;
  const { why, ...right } = fix;
  return { ...e, ...right, features: { ...e.features, ...right.features }, corrected: why };
};

/** Text as parsers differ on it without meaning to: spacing, invisible marks, "…" vs "...", a trailing ellipsis. */
export const normText = (s: string): string =>
  s
    .normalize('NFC')
    .replace(/[\u200b-\u200f\u2060\ufeff]/g, '')
    .replace(/…/g, '...')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/\s*\.\.\.$/, '');

/** The host a displayed link or domain names: `https://www.x.com › a › b`, `x.com/a`, `www.x.com` → `x.com`. */
export const hostOf = (s: string): string =>
  (
    s
      .trim()
      .toLowerCase()
      .replace(/^[a-z]+:\/\//, '')
      .split(/[\s›/?#]/)[0] ?? ''
  ).replace(/^www\./, '');

/** Month names by their first three letters (English, and the Swedish and German ones that differ). */
const MONTHS: Record<string, number> = Object.fromEntries(
  ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']
    .map((m, i) => [m, i + 1] as const)
    .concat([
      ['maj', 5],
      ['mai', 5],
      ['okt', 10],
      ['dez', 12],
      ['mär', 3],
    ]),
);

/**
 * A date as an ISO day where it names one ("Nov 8, 2023", "29 apr. 2024", "2023-11-08"), else its normalised
 * text ("3 days ago" needs the capture time, which no expected output gives).
 */
export const dateKey = (s: string): string => {
  const t = normText(s).toLowerCase();
  const iso = /^(\d{4})-(\d{2})-(\d{2})/.exec(t);
  if (iso) return iso.slice(1, 4).join('-');
  const mdy = /^(\p{L}+)\.? (\d{1,2}),? (\d{4})$/u.exec(t);
  const dmy = /^(\d{1,2})\.? (\p{L}+)\.? (\d{4})$/u.exec(t);
  const [month, day, year] = mdy ? [mdy[1], mdy[2], mdy[3]] : dmy ? [dmy[2], dmy[1], dmy[3]] : [];
  const n = month ? MONTHS[month.slice(0, 3)] : undefined;
  if (!n || !day || !year) return t;
  return `${year}-${String(n).padStart(2, '0')}-${day.padStart(2, '0')}`;
};

/** Our result a pin is about: by the link the source gives, else by position. */
export const resultFor = (results: OrganicResult[], pin: FieldPin): OrganicResult | undefined =>
  pin.link !== undefined
    ? results.find((r) => normLink(r.link ?? '') === normLink(pin.link as string))
    : results[pin.index];

type Extensions = { detected_extensions?: { rating?: number; reviews?: number } };

const ratingOf = (r: OrganicResult): { value: number; reviews?: number } | undefined => {
  const rich = r.rich_snippet as { top?: Extensions; bottom?: Extensions } | undefined;
  const d = [rich?.top, rich?.bottom].find(
    (x) => typeof x?.detected_extensions?.rating === 'number',
  )?.detected_extensions;
  return d?.rating === undefined ? undefined : { value: d.rating, ...(d.reviews ? { reviews: d.reviews } : {}) };
};

type OurSitelink = { title: string; link: string; inline: boolean };

/** Our sitelinks in the order a reader meets them: the cards (`expanded`) come before any inline row. */
const sitelinksOf = (r: OrganicResult): OurSitelink[] => {
  const s = r.sitelinks as { inline?: OurSitelink[]; expanded?: OurSitelink[] } | undefined;
  return [
    ...(s?.expanded ?? []).map((x) => ({ ...x, inline: false })),
    ...(s?.inline ?? []).map((x) => ({ ...x, inline: true })),
  ];
};

export interface FieldCheck {
  ok: boolean;
  got: unknown;
  want: unknown;
}

/** Whether our result agrees with one pin, with both sides as compared (normalised). */
export const checkField = (results: OrganicResult[], pin: FieldPin): FieldCheck => {
  const r = resultFor(results, pin);
  if (!r) return { ok: false, got: 'no such result', want: pin.link ?? pin.index };
  const value = {
    snippet: r.snippet,
    displayed_link: r.displayed_link,
    date: r.date,
    rating: ratingOf(r),
    sitelinks: sitelinksOf(r).length ? sitelinksOf(r) : undefined,
  }[pin.field];
  if (pin.present !== undefined) return { ok: (value !== undefined) === pin.present, got: value, want: pin.present };
  if (value === undefined)
    return { ok: false, got: undefined, want: pin.text ?? pin.parts ?? pin.rating ?? pin.sitelinks };
  switch (pin.field) {
    case 'snippet': {
      const norm = (x: string) => (pin.ignoreSpacing ? normText(x).replace(/\s/g, '') : normText(x));
      const got = norm(r.snippet ?? '');
      const ok = pin.parts ? pin.parts.every((p) => got.includes(norm(p))) : got === norm(pin.text ?? '');
      return { ok, got: r.snippet, want: pin.parts ?? pin.text };
    }
    case 'displayed_link':
      return { ok: hostOf(r.displayed_link ?? '') === hostOf(pin.text ?? ''), got: r.displayed_link, want: pin.text };
    case 'date':
      return { ok: dateKey(r.date ?? '') === dateKey(pin.text ?? ''), got: r.date, want: pin.text };
    case 'rating': {
      const got = ratingOf(r);
      const want = pin.rating;
      const ok =
        !!got &&
        !!want &&
        Math.abs(got.value - want.value) < 0.01 &&
        (want.reviews === undefined || got.reviews === want.reviews);
      return { ok, got, want };
    }
    case 'sitelinks': {
      const got = sitelinksOf(r);
      const want = pin.sitelinks ?? {};
      const itemOk = (w: SitelinkPin) => {
        const g = got[w.at];
        return (
          !!g &&
          (w.title === undefined || normText(g.title) === normText(w.title)) &&
          (w.link === undefined || normLink(g.link) === normLink(w.link)) &&
          (w.inline === undefined || g.inline === w.inline)
        );
      };
      const ok = (want.count === undefined || got.length === want.count) && (want.items ?? []).every(itemOk);
      return { ok, got: got.map(({ title, link, inline }) => ({ title, link, inline })), want };
    }
  }
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
  text?: string | null;
  cite?: string | null;
  /** 2023 snapshots: the date shown before the snippet. */
  timestamp?: string | null;
  details?: { type?: string; rating?: number; items?: Array<{ text?: string; url?: string }> } | string | null;
}

/** Google's "Mar 3, 2024 — " / "3 days ago — " before a snippet; WebSearcher keeps it in `text`. */
const WS_DATE = /^(.{3,30}?)\s+—\s+/;

/**
 * WebSearcher's per-result fields: `text` is the snippet (after the date Google prefixes), `cite` the displayed
 * link (a host only when it is one: social and video results show "2M+ followers" there), `details` of type
 * `ratings` the rating, `submenu` items the sitelinks (less its "More results from …" link into Google search).
 * A missing detail pins nothing: WebSearcher reads no sitelinks, ratings or dates on many layouts.
 */
const websearcherFields = (general: WsResult[]): FieldPin[] => {
  const pins: FieldPin[] = [];
  general.forEach((r, index) => {
    const link = r.url ?? undefined;
    if (!link) return;
    const at = { index, link };
    let text = (r.text ?? '').trim();
    const date = WS_DATE.exec(text);
    if (date?.[1] && /\d/.test(date[1])) {
      pins.push({ ...at, field: 'date', text: date[1] });
      text = text.slice(date[0].length);
    } else if (r.timestamp) pins.push({ ...at, field: 'date', text: r.timestamp });
    if (text) pins.push({ ...at, field: 'snippet', text, ignoreSpacing: true });
    if (r.cite && /^(https?:\/\/)?[\w-]+(\.[\w-]+)+(\s|›|\/|$)/.test(r.cite.trim()))
      pins.push({ ...at, field: 'displayed_link', text: hostOf(r.cite) });
    const d = typeof r.details === 'object' ? r.details : undefined;
    if (d?.type === 'ratings' && typeof d.rating === 'number')
      pins.push({ ...at, field: 'rating', rating: { value: d.rating } });
    const items = (d?.type === 'hyperlinks' ? (d.items ?? []) : []).filter(
      (i) => i.url && /^https?:/.test(i.url) && !isGoogleInternal(i.url),
    );
    if (items.length)
      pins.push({
        ...at,
        field: 'sitelinks',
        sitelinks: { count: items.length, items: items.map((i, j) => ({ at: j, title: i.text, link: i.url })) },
      });
  });
  return pins;
};

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
    fields: websearcherFields(general),
    ...(f?.result_estimate_count ? { totalResults: f.result_estimate_count } : {}),
    // The 2023 snapshots hold only result rows, not which blocks were absent: presence is all they pin.
    features: Array.isArray(data) ? Object.fromEntries(Object.entries(features).filter(([, v]) => v)) : features,
  };
};

interface ZAssertion {
  actual: string;
  matcher: string;
  expected?: unknown;
  expected_src?: string;
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
  const fields: FieldPin[] = [];
  for (const [k, v] of Object.entries(a)) {
    const sn = /^sn\[(\d+)\]$/.exec(k);
    if (sn && v && typeof v === 'object') {
      const o = v as { t?: string; u?: string; s?: string; d?: string };
      // `d` is the domain KokocGroup reads for the result (without "www.").
      if (o.d) fields.push({ index: Number(sn[1]), field: 'displayed_link', text: o.d });
      // KokocGroup's parser is wrong on two counts, both visible in the HTML: it cuts the target out of
      // `/url?…&url=X&ved=…` as raw text, so its links keep `&ved=…&usg=…`, and its title is the text of the whole
      // anchor, so the site name (`s`) is glued to the end ("…Shampoo 250OZON"). The right answers are asserted.
      const link = o.u?.replace(/&ved=.*$/, '');
      const title = o.s && o.t?.endsWith(o.s) ? o.t.slice(0, -o.s.length) : o.t;
      at.push({ index: Number(sn[1]), ...(link ? { link } : {}), ...(title ? { title } : {}) });
    }
    const org = /^organic\[(\d+)\]\.(url|title)$/.exec(k);
    if (org && typeof v === 'string') at.push({ index: Number(org[1]), [org[2] === 'url' ? 'link' : 'title']: v });
    const field = organicField(k, v);
    if (field) fields.push(field);
  }
  if (at.length) e.organicAt = at;
  if (fields.length) e.fields = fields;
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

/**
 * kjellberg's and bs-serp-parser's per-result assertions: `description` (whole, `(contains)` parts, or "non-empty"),
 * `display_url`, `site_links_count`. A key marked "(as parsed …)" is the other parser's output where the
 * transcriber saw it was wrong: it is kept as asserted, and FIELD_CORRECTIONS says what the page shows.
 */
const organicField = (key: string, v: unknown): FieldPin | undefined => {
  const m = /^organic\[(\d+)\]\.(description|display_url|site_links_count)(\((contains)\)|\(as parsed[^)]*\))?$/.exec(
    key,
  );
  if (!m) return undefined;
  const index = Number(m[1]);
  if (m[2] === 'description') {
    if (v === 'non-empty') return { index, field: 'snippet', present: true };
    if (m[4] === 'contains') return { index, field: 'snippet', parts: ([] as string[]).concat(v as string | string[]) };
    return typeof v === 'string' ? { index, field: 'snippet', text: v } : undefined;
  }
  if (m[2] === 'display_url' && typeof v === 'string') return { index, field: 'displayed_link', text: v };
  if (m[2] === 'site_links_count' && typeof v === 'number')
    return { index, field: 'sitelinks', sitelinks: { count: v } };
  return undefined;
};

/** Only the first describe block: later ones in serp-parser's specs run against other inputs (options off). */
const fromZlurad = (file: string, blocks: Array<{ assertions: ZAssertion[] }>): Expectation => {
  const e: Expectation = { file, kind: 'serp', features: {} };
  const at: NonNullable<Expectation['organicAt']> = [];
  const fields: FieldPin[] = [];
  for (const assertion of blocks[0]?.assertions ?? []) {
    const { actual, matcher, expected } = assertion;
    const field = zluradField(assertion);
    if (field) fields.push(field);
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
  const merged = mergeSitelinkPins(fields);
  if (merged.length) e.fields = merged;
  return e;
};

/**
 * serp-parser's assertions on one organic field: `snippet` (toBe, toContain, and one written as
 * `snippet.replace(/\s+/g, ' ').trim()` whose expected text only survives in `expected_src`), `domain` (the host of
 * its `url`, compared with the host we display), `sitelinks` (length, absence, and `[j].title/href/type`, hrefs as
 * served: `/url?q=` on no-JS pages). `organic.filter(x => x.domain === '')` is no field pin: its domain comes from
 * the link, which every result has.
 */
const zluradField = ({ actual, matcher, expected, expected_src }: ZAssertion): FieldPin | undefined => {
  const m = /^serp\.organic\[(\d+)\]\.(snippet|domain|sitelinks)(?:\[(\d+)\]\.(title|href|type))?(.*)$/.exec(actual);
  if (!m) return undefined;
  const index = Number(m[1]);
  if (m[2] === 'snippet') {
    if (matcher === 'toBe' && typeof expected === 'string') return { index, field: 'snippet', text: expected };
    if (matcher === 'toContain' && typeof expected === 'string') return { index, field: 'snippet', parts: [expected] };
    const src = /toBe\(\s*'((?:[^'\\]|\\.)*)'/.exec(expected_src ?? '')?.[1];
    return src ? { index, field: 'snippet', text: src.replace(/\\(.)/g, '$1') } : undefined;
  }
  if (m[2] === 'domain')
    return matcher === 'toBe' && typeof expected === 'string'
      ? { index, field: 'displayed_link', text: expected }
      : undefined;
  // `sitelinks[0].snippet` (not.toHaveProperty): serp-parser's inline links have no snippet, nor have ours.
  if (m[5]) return undefined;
  if (m[3] === undefined) {
    if (matcher === 'toHaveLength') return { index, field: 'sitelinks', sitelinks: { count: expected as number } };
    if (matcher === 'not.toHaveProperty') return { index, field: 'sitelinks', present: false };
    return undefined;
  }
  if (matcher !== 'toHaveProperty') return undefined;
  const item: SitelinkPin = { at: Number(m[3]) };
  if (m[4] === 'title' && typeof expected === 'string') item.title = expected;
  if (m[4] === 'href' && typeof expected === 'string') item.link = unwrapLink(expected);
  if (m[4] === 'type') item.inline = expected === 'INLINE';
  return { index, field: 'sitelinks', sitelinks: { items: [item] } };
};

/** serp-parser asserts a sitelink's title, href and type one by one: one pin per result holds them together. */
const mergeSitelinkPins = (pins: FieldPin[]): FieldPin[] => {
  const out: FieldPin[] = [];
  for (const p of pins) {
    const prev = p.field === 'sitelinks' ? out.find((o) => o.field === 'sitelinks' && o.index === p.index) : undefined;
    if (!prev?.sitelinks || !p.sitelinks) {
      out.push(p);
      continue;
    }
    if (p.sitelinks.count !== undefined) prev.sitelinks.count = p.sitelinks.count;
    for (const item of p.sitelinks.items ?? []) {
      const same = prev.sitelinks.items?.find((i) => i.at === item.at);
      if (same) Object.assign(same, item);
      else prev.sitelinks.items = [...(prev.sitelinks.items ?? []), item];
    }
  }
  return out;
};

interface KjellbergResult {
  url: string;
  title: string;
  description: string;
  domain: string;
  date: string | null;
  rating: { score: number; max_score: number; number_of_ratings: number } | null;
  site_links: Array<{ title: string; url: string }>;
}

/**
 * kjellberg's fragment JSON is its parser's whole output for one result, so an empty or null member pins absence.
 * Its `domain` is the host without "www."; `max_score` is always 5 and has no counterpart in SerpApi's shape.
 */
const fromKjellbergFragment = (file: string, raw: Record<string, unknown>): Expectation => {
  const d = raw as unknown as KjellbergResult;
  const at = { index: 0, link: d.url };
  return {
    file,
    kind: 'serp',
    organicCount: 1,
    organicAt: [{ index: 0, link: d.url, title: d.title }],
    fields: [
      { ...at, field: 'snippet', text: d.description },
      { ...at, field: 'displayed_link', text: d.domain },
      d.date ? { ...at, field: 'date', text: d.date } : { ...at, field: 'date', present: false },
      d.rating
        ? { ...at, field: 'rating', rating: { value: d.rating.score, reviews: d.rating.number_of_ratings } }
        : { ...at, field: 'rating', present: false },
      d.site_links.length
        ? {
            ...at,
            field: 'sitelinks',
            sitelinks: {
              count: d.site_links.length,
              items: d.site_links.map((l, j) => ({ at: j, title: l.title, link: l.url })),
            },
          }
        : { ...at, field: 'sitelinks', present: false },
    ],
  };
};
