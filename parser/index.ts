import type { ParsedSerp } from '../contracts/result.js';
import { parseAiOverview } from './aiOverview.js';
import { classifyPage, classifyWithDetail, type PageKind } from './classify.js';
import { loadDom } from './dom/index.js';
import { parseFeatures } from './features/index.js';
import { parseInformation } from './information.js';
import { isNewsTab, pageLinks, parseNews, tbmOf } from './news.js';
import { parseOrganic } from './organic.js';
import { assembleRawHtml, mergePages, splitRawHtml } from './pages.js';

export type { ParsedSerp, SerpResult } from '../contracts/result.js';
export type { ClassifyContext } from './classify.js';
export { compatSearchParameters, serpApiTimestamp, toCompat } from './compat.js';
export type { PageKind };
export { assembleRawHtml, classifyPage, mergePages, splitRawHtml };
/** What kind of page this is (a SERP or an interstitial) and why: `{kind, detail}`. */
export const classify = classifyWithDetail;

/** Bump whenever the output for the same HTML changes: stored raw HTML is re-parsed when it does. */
export const PARSER_VERSION = '1.10.0';

export interface ParseContext {
  captureAio: boolean;
  /** 0-based Google start offset of this page */
  start?: number;
  device?: 'desktop' | 'mobile' | 'tablet';
  status?: number;
  finalUrl?: string;
  /** the request's `tbm` (search type); when absent, the one in `finalUrl`, else the page's own markup decides */
  tbm?: string;
}

export type ParseOutcome = { kind: 'serp'; serp: ParsedSerp } | { kind: Exclude<PageKind, 'serp'>; detail: string };

/** One page. Interstitials come back as typed outcomes, never as an empty result the crawler could store. */
export const parse = (html: string, context: ParseContext): ParseOutcome => {
  const page = classifyWithDetail(html, { status: context.status, finalUrl: context.finalUrl });
  if (page.kind !== 'serp') return { kind: page.kind, detail: page.detail };
  const root = loadDom(html);
  // A news tab lists articles, which SerpApi reports as `news_results`, not as web results.
  const features = parseFeatures(root);
  const tbm = context.tbm ?? tbmOf(context.finalUrl);
  const news = isNewsTab(root, tbm, pageLinks(features.pagination)) ? parseNews(root, html) : undefined;
  const organic = news ? [] : parseOrganic(root);
  const serp: ParsedSerp = {
    organic_results: organic,
    serp_features: news?.length ? { news_results: news, ...features } : features,
    information: parseInformation(root, html, news ? news.length : organic.length),
  };
  // Only when asked for: the overview is the costliest block to read and some callers must not store it.
  if (context.captureAio) {
    const aio = parseAiOverview(root, html);
    if (aio) serp.ai_overview = aio;
  }
  return { kind: 'serp', serp };
};

/**
 * Stored raw HTML of a whole search: each page parsed, the SERPs merged. Interstitial pages are skipped; when
 * none of the pages is a SERP the first page's outcome explains why.
 */
export const parseRaw = (raw: string, context: ParseContext): ParseOutcome => {
  const pages = splitRawHtml(raw).map((p) => ({
    start: p.start,
    // the stored page URL is the request's: it carries the `tbm` a re-parse has no other way to learn
    outcome: parse(p.html, { ...context, start: p.start, tbm: context.tbm ?? tbmOf(p.url) }),
  }));
  const serps = pages.flatMap((p) => (p.outcome.kind === 'serp' ? [{ start: p.start, serp: p.outcome.serp }] : []));
  if (serps.length === 0) {
    const first = pages[0]?.outcome;
    return first && first.kind !== 'serp' ? first : { kind: 'error', detail: 'no page in raw HTML' };
  }
  return { kind: 'serp', serp: mergePages(serps) };
};
