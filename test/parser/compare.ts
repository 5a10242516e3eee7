import type { ParsedSerp } from '../../contracts/result.js';
import { type ParseContext, parse, toCompat } from '../../parser/index.js';
import { readFixtureText } from '../support/fixtures.js';

/** The SERP parsed from `html`; a page that is no SERP (a block, an interstitial) throws with its detail. */
export const serpOfHtml = (html: string, context: Partial<ParseContext> = {}): ParsedSerp => {
  const out = parse(html, { captureAio: false, ...context });
  if (out.kind !== 'serp') throw new Error(out.detail);
  return out.serp;
};

/** The SERP of a fixture page, by its path under the fixtures directory (`serp/websearcher/….html.gz`). */
export const serpOfFixture = (path: string, context: Partial<ParseContext> = {}): ParsedSerp =>
  serpOfHtml(readFixtureText(path), context);

/** Trailing slashes and fragments differ between parsers' URL cleaning without changing the target. */
export const normLink = (u: string): string => u.replace(/#.*$/, '').replace(/\/$/, '');

/** A parsed page in SerpApi's names, as `output=compat` serves it, with the metadata a stored job would carry. */
export const compatOf = (serp: ParsedSerp, parameters: Record<string, unknown>): Record<string, unknown> =>
  toCompat({
    search_metadata: {
      id: 'x',
      status: 'done',
      cached: false,
      created_at: '2026-01-01T00:00:00Z',
      parameters,
      information: serp.information,
    },
    organic_results: serp.organic_results,
    serp_features: serp.serp_features,
  });
