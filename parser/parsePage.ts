import type { ParsedSerp } from '../contracts/result.js';
import { parseAiOverview } from './aiOverview.js';
import { classifyWithDetail, type PageKind } from './classify.js';
import { type HTMLElement, loadDom } from './dom/index.js';
import { parseFeatures } from './features/index.js';
import { parseInformation } from './information.js';
import { isNewsTab, pageLinks, parseNews, tbmOf } from './news.js';
import { parseOrganic } from './organic.js';

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
export const parse = (html: string, context: ParseContext): ParseOutcome => parseWithRoot(html, context).outcome;

/** `parse`, with the document tree it read (what `positionMarks` needs to find the recorded elements) */
export const parseWithRoot = (html: string, context: ParseContext): { outcome: ParseOutcome; root?: HTMLElement } => {
  const page = classifyWithDetail(html, { status: context.status, finalUrl: context.finalUrl });
  if (page.kind !== 'serp') return { outcome: { kind: page.kind, detail: page.detail } };
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
  return { outcome: { kind: 'serp', serp }, root };
};
