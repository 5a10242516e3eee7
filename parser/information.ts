import type { ParsedSerp } from '../contracts/result.js';
import { type HTMLElement, qs, textOf } from './dom/index.js';
import { parseDetectedLocation } from './location.js';

type Information = ParsedSerp['information'];

/**
 * "About 1,270,000 results (0.52 seconds)" in every language: the first number is the estimate and the
 * parenthesised decimal the time; separators (`,` `.` space, narrow no-break space) vary by locale.
 */
export const parseResultStats = (text: string): { total?: number; time?: number } => {
  const out: { total?: number; time?: number } = {};
  const time = /\(\D*?(\d+[.,]\d+)\D*\)/.exec(text);
  if (time?.[1]) out.time = Number(time[1].replace(',', '.'));
  const head = time ? text.slice(0, time.index) : text;
  const total = /\d[\d.,\s\u00a0\u202f']*/.exec(head);
  if (total) {
    const n = Number(total[0].replace(/[^\d]/g, ''));
    if (Number.isFinite(n)) out.total = n;
  }
  return out;
};

/**
 * 2026 pages rendered without `#rso` keep `#result-stats` only inside an inline script
 * (`jsl.dh(…,"\x3cdiv id=\"result-stats\">About 0 results\x3cnobr> (0.19s)…")`), which the DOM does not hold
 * since script bodies are skipped, so the raw HTML is searched for it. The id also appears in the page's CSS
 * (`#result-stats{…}`), so only an occurrence written as an escaped `id="result-stats"` counts.
 */
const ESCAPED_ID = /id=(?:\\"|\\x22|\\u0022|")$/;

const rawResultStats = (raw: string): string | undefined => {
  for (let i = raw.indexOf('result-stats'); i >= 0; i = raw.indexOf('result-stats', i + 1)) {
    if (!ESCAPED_ID.test(raw.slice(Math.max(0, i - 10), i))) continue;
    const chunk = raw
      .slice(i, i + 600)
      .replace(/\\u003c/g, '<')
      .replace(/\\u003e/g, '>')
      .replace(/\\x3c/g, '<')
      .replace(/\\x3e/g, '>');
    const m = /^[^>]*>(.*?)<\/div>/s.exec(chunk);
    const text = m?.[1]?.replace(/<[^>]+>/g, ' ').replace(/&nbsp;/g, ' ');
    if (text) return text;
  }
  return undefined;
};

export const parseInformation = (root: HTMLElement, raw: string, organicCount: number): Information => {
  const info: Information = {};
  const statsText = textOf(qs(root, '#result-stats')) || rawResultStats(raw) || '';
  const { total, time } = parseResultStats(statsText);
  if (total !== undefined) info.total_results = total;
  if (time !== undefined) info.time_taken_displayed = time;
  const query = queryDisplayed(root);
  if (query) info.query_displayed = query;
  const { showing, didYouMean } = spelling(root);
  if (showing) {
    info.showing_results_for = showing;
    info.organic_results_state = 'Some results for exact spelling but showing fixed spelling';
  } else if (organicCount === 0) {
    info.organic_results_state = 'Fully empty';
  } else {
    info.organic_results_state = 'Results for exact spelling';
  }
  if (didYouMean && !showing) info.spelling_fix = didYouMean;
  const detected = parseDetectedLocation(root, raw);
  if (detected) info.detected_location = detected;
  return info;
};

/**
 * Google's spelling notice, by its links rather than its words ("Showing results for", "Did you mean" are
 * localised): the corrected query's link carries `spell=1`; when Google already searched the correction, a
 * "Search instead for" link with `nfpr=1` sits in the same notice. Desktop pages also mark the auto-corrected case
 * with `#fprsl`, and basic (no-JS) pages write the notice as `#scc` > `a#scl`.
 */
const spelling = (root: HTMLElement): { showing: string; didYouMean: string } => {
  const fixed = textOf(qs(root, '#fprsl'));
  if (fixed) return { showing: fixed, didYouMean: '' };
  const link = qs(root, 'a[href*="spell=1"]');
  if (!link) return { showing: '', didYouMean: textOf(qs(root, 'a.gL9Hy') ?? qs(root, 'a.spell')) };
  // The notice is the link's parent or grandparent; pagination links elsewhere may carry nfpr=1 too.
  let searchedInstead = false;
  for (let n = link.parentNode, i = 0; n && i < 2 && !searchedInstead; n = n.parentNode, i++)
    searchedInstead = qs(n, 'a[href*="nfpr=1"]') !== null;
  return searchedInstead ? { showing: textOf(link), didYouMean: '' } : { showing: '', didYouMean: textOf(link) };
};

/** The search box holds the query as Google shows it; the `<title>` ("q - Google Search") is the fallback. */
export const queryDisplayed = (root: HTMLElement): string | undefined => {
  const box = qs(root, 'textarea[name="q"]') ?? qs(root, 'input[name="q"]');
  const v = box?.getAttribute('value') ?? (box ? textOf(box) : '');
  if (v) return v;
  const title = textOf(qs(root, 'title'));
  const m = /^(.*) - [^-]+$/.exec(title);
  return m?.[1] || undefined;
};
