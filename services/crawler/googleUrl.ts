import { GOOGLE_DOMAINS } from '../../contracts/googleParams.js';
import { GOOGLE_PASS_THROUGH, type SearchRequest } from '../../contracts/search.js';
import { CrawlRequestError } from './errors.js';

/** gl / hl / uule after the location was resolved (an explicit request value always wins). */
export interface Targeting {
  gl?: string;
  hl?: string;
  uule?: string;
}

const googleDomains = new Set<string>(GOOGLE_DOMAINS);

/**
 * The origin a request is sent to. `engine_domain` is checked again here, not only at the HTTP edge, so no job
 * message (replayed, hand-written, from an older version) can aim the crawler at a host that is not Google's.
 * `override` (SERP_GOOGLE_ORIGIN) replaces the origin for tests and mirrors; the domain is still validated.
 */
export const googleOrigin = (request: Pick<SearchRequest, 'engine_domain'>, override?: string): string => {
  const domain = request.engine_domain ?? 'google.com';
  if (!googleDomains.has(domain))
    throw new CrawlRequestError(
      `engine_domain ${JSON.stringify(domain)} is not a Google search domain`,
      'engine_domain',
    );
  return (override ?? `https://www.${domain}`).replace(/\/+$/, '');
};

/**
 * `{origin}/search?q=…` for one results page. `num` is never sent: Google has ignored it since September 2025 and it
 * only marks the client as a scraper. `device` and `color_scheme` are not URL parameters: the fetcher expresses them
 * (user agent, client hints, viewport, prefers-color-scheme).
 */
export const buildGoogleUrl = (
  request: SearchRequest,
  page: { origin: string; start: number; targeting?: Targeting },
): string => {
  const params = new URLSearchParams();
  params.set('q', request.keyword);
  const gl = request.gl ?? page.targeting?.gl;
  const hl = request.hl ?? page.targeting?.hl;
  const uule = request.uule ?? page.targeting?.uule;
  if (gl) params.set('gl', gl);
  if (hl) params.set('hl', hl);
  if (uule) params.set('uule', uule);
  for (const name of GOOGLE_PASS_THROUGH) {
    const value = request[name];
    if (value !== undefined) params.set(name, String(value));
  }
  if (page.start > 0) params.set('start', String(page.start));
  return `${page.origin}/search?${params.toString()}`;
};
