import type { ParsedSerp } from '../../contracts/result.js';
import { toCompat } from '../../parser/index.js';

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
