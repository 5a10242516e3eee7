import type { OrganicResult, ParsedSerp } from '../contracts/result.js';

export interface RawPage {
  start: number;
  url: string;
  fetchedAt: string;
  html: string;
}

const MARKER = /<!-- serp-page start=(\d+) url=(\S*) fetched_at=(\S*) -->\n?/g;

/** The marker is one line of space-separated fields, so a value must never hold whitespace or end the comment. */
const safe = (v: string): string => v.replace(/\s/g, (c) => encodeURIComponent(c)).replace(/--/g, '%2D%2D');

/** What stands before a page's HTML in the raw HTML: the separator (pages after the first) and its marker line. */
export const rawChunkHead = (p: Omit<RawPage, 'html'>, first: boolean): string =>
  `${first ? '' : '\n'}<!-- serp-page start=${p.start} url=${safe(p.url)} fetched_at=${safe(p.fetchedAt)} -->\n`;

/** One page's part of the raw HTML: its marker line, then the page; pages after the first are joined by a newline. */
export const rawHtmlChunk = (p: RawPage, first: boolean): string => `${rawChunkHead(p, first)}${p.html}`;

/** Every fetched page in order, each behind its `<!-- serp-page … -->` marker (docs/parser.md#how-it-reads-a-page). */
export const assembleRawHtml = (pages: RawPage[]): string => pages.map((p, i) => rawHtmlChunk(p, i === 0)).join('');

/** Inverse of `assembleRawHtml`; a file saved without markers (a page from disk) is one page at start 0. */
export const splitRawHtml = (raw: string): RawPage[] => {
  const marks = [...raw.matchAll(MARKER)];
  if (marks.length === 0) return [{ start: 0, url: '', fetchedAt: '', html: raw }];
  return marks.map((m, i) => {
    const from = (m.index ?? 0) + m[0].length;
    const next = marks[i + 1];
    let to = next ? (next.index ?? raw.length) : raw.length;
    // assembleRawHtml joins pages with one newline, which belongs to the separator and not to the page.
    if (next && raw[to - 1] === '\n') to -= 1;
    return {
      start: Number(m[1]),
      url: decodeURIComponent(m[2] ?? ''),
      fetchedAt: decodeURIComponent(m[3] ?? ''),
      html: raw.slice(from, to),
    };
  });
};

/**
 * Lists that belong to the search rather than to a page: every page repeats them with links of its own (its `ved`),
 * so they are taken from the first page that has them, as single-object features are.
 */
const OF_THE_SEARCH = new Set(['filters']);

/**
 * One result from the pages of one search: positions continue 1..N in page order, a link Google repeats on a
 * later page is kept once (where it first appeared), and each result records its 1-based page. List features
 * are concatenated (news-tab articles renumbered as organic results are); single-object features (answer box, knowledge
 * graph) and search information come from the first page, which is the one users see first.
 */
export const mergePages = (pages: Array<{ start: number; serp: ParsedSerp }>): ParsedSerp => {
  const sorted = [...pages].sort((a, b) => a.start - b.start);
  const organic: OrganicResult[] = [];
  const seen = new Set<string>();
  const features: Record<string, unknown> = {};
  sorted.forEach(({ serp }, i) => {
    for (const r of serp.organic_results) {
      const key = r.link ?? `title:${r.title}`;
      if (seen.has(key)) continue;
      seen.add(key);
      organic.push({ ...r, position: organic.length + 1, page: i + 1 });
    }
    for (const [name, value] of Object.entries(serp.serp_features)) {
      const prev = features[name];
      if (prev === undefined) features[name] = value;
      else if (Array.isArray(prev) && Array.isArray(value) && !OF_THE_SEARCH.has(name))
        features[name] = [...prev, ...value];
    }
  });
  // Lists repeat across pages (Google shows the same "people also ask" on every page): each entry is kept once, where
  // it first appeared, and numbered 1..N when it had a position. News-tab articles are numbered like web results.
  for (const [name, value] of Object.entries(features)) if (Array.isArray(value)) features[name] = dedupe(value);
  const first = sorted[0]?.serp;
  const aio = sorted.find((p) => p.serp.ai_overview)?.serp.ai_overview;
  return {
    organic_results: organic,
    serp_features: features,
    ...(aio ? { ai_overview: aio } : {}),
    information: first ? { ...first.information } : {},
  };
};

/** What makes two entries of a feature list the same: the link, else the question, title or text, else the whole. */
const identity = (item: unknown): string => {
  if (!item || typeof item !== 'object') return `v:${String(item)}`;
  const o = item as Record<string, unknown>;
  for (const field of ['link', 'question', 'title', 'text', 'query', 'name']) {
    const v = o[field];
    if (typeof v === 'string' && v) return `${field}:${v}`;
  }
  return `json:${JSON.stringify(item)}`;
};

const dedupe = (items: unknown[]): unknown[] => {
  const seen = new Set<string>();
  const out: unknown[] = [];
  for (const item of items) {
    if (item === null || item === undefined) continue;
    const key = identity(item);
    if (seen.has(key)) continue;
    seen.add(key);
    const numbered = typeof item === 'object' && typeof (item as { position?: unknown }).position === 'number';
    out.push(numbered ? { ...(item as object), position: out.length + 1 } : item);
  }
  return out;
};
