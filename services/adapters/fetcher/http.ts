import { gotScraping } from 'got-scraping';
import { deviceProfile, navigationHeaders } from '../../geo/devices.js';
import type { FetchedPage, Fetcher, FetchRequest } from '../../ports/fetcher.js';
import { mergeCookies, setCookieHeaderPairs } from './cookies.js';

export interface HttpFetcherOptions {
  /** used when a request carries no session (tests, a pool without proxies) */
  proxyUrl?: string;
  /** HTTP/2 when the origin offers it over TLS; plain http:// origins (the fake Google) always speak HTTP/1.1 */
  http2?: boolean;
  /** how many redirects to follow (Google's /sorry/ redirect is one, and must be seen as the final URL) */
  maxRedirects?: number;
}

/**
 * The fast path (DESIGN.md §5): got-scraping gives a browser's TLS fingerprint and header order; the headers are the
 * device's own (user agent, client hints) so they match what the browser of the same session sent. It reuses the
 * session's cookies, without which Google answers with its JS challenge. It never judges the answer: classifying
 * blocks is the crawler's job, so every status comes back as a page.
 */
export const createHttpFetcher = (options: HttpFetcherOptions = {}): Fetcher => ({
  name: 'http',
  async fetch(request: FetchRequest): Promise<FetchedPage> {
    const hl = new URL(request.url).searchParams.get('hl') ?? undefined;
    const userAgent = request.session?.userAgent ?? deviceProfile(request.device).userAgent;
    const headers = navigationHeaders(request.device, userAgent, hl);
    const sessionCookies = request.session?.cookies ?? '';
    if (sessionCookies) headers.cookie = sessionCookies;
    const response = await gotScraping({
      url: request.url,
      headers,
      useHeaderGenerator: false,
      proxyUrl: request.session?.proxyUrl ?? options.proxyUrl,
      http2: options.http2 ?? true,
      throwHttpErrors: false,
      followRedirect: true,
      maxRedirects: options.maxRedirects ?? 5,
      retry: { limit: 0 },
      timeout: { request: request.timeoutMs },
      signal: request.signal,
      // bytes, not text: decoding is the parse pool's work, off the event loop
      responseType: 'buffer',
    });
    const setCookies = response.headers['set-cookie'] ?? [];
    return {
      url: request.url,
      finalUrl: response.url,
      status: response.statusCode,
      body: response.body,
      fetchedAt: new Date().toISOString(),
      cookies: mergeCookies(sessionCookies, setCookieHeaderPairs(setCookies)),
    };
  },
  async close() {},
});
