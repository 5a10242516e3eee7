import { classifyPage, classifyWithDetail, type PageKind } from './classify.js';
import { tbmOf } from './news.js';
import { assembleRawHtml, mergePages, splitRawHtml } from './pages.js';
import { type ParseContext, type ParseOutcome, parse } from './parsePage.js';

export type { ParsedSerp, SerpResult } from '../contracts/result.js';
export type { ClassifyContext } from './classify.js';
export { compatSearchParameters, serpApiTimestamp, toCompat } from './compat.js';
export { type ParseContext, type ParseOutcome, parse, parseWithRoot } from './parsePage.js';
export { type PositionMark, type PositionTarget, positionMarks } from './positions.js';
export type { PageKind };
export { assembleRawHtml, classifyPage, mergePages, splitRawHtml };
/** What kind of page this is (a SERP or an interstitial) and why: `{kind, detail}`. */
export const classify = classifyWithDetail;

/** Bump whenever the output for the same HTML changes: stored raw HTML is re-parsed when it does. */
export const PARSER_VERSION = '1.10.0';

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
