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
 * The session's cookies through one fetch: got asks the jar before each request of a redirect chain and hands it each
 * response's Set-Cookie, the redirects' included. With a fixed Cookie header, a cookie Google set on a redirect
 * (consent, /sorry/) went neither to the next hop nor back to the session. One header for every host, as the session
 * keeps them (a Google search stays on Google's hosts).
 */
const cookieJarFor = (initial: string) => {
  let header = initial;
  return {
    header: () => header,
    jar: {
      getCookieString: async (_url: string) => header,
      setCookie: async (raw: string, _url: string) => {
        header = mergeCookies(header, setCookieHeaderPairs([raw]));
      },
    },
  };
};

/**
 * The fast path (docs/operations.md#which-fetcher): got-scraping gives a browser's TLS fingerprint and header order;
 * the headers are the device's own (user agent, client hints) so they match what the browser of the same session sent.
 * It reuses the session's cookies, without which Google answers with its JS challenge. It never judges the answer:
 * classifying blocks is the crawler's job, so every status comes back as a page.
 */
export const createHttpFetcher = (options: HttpFetcherOptions = {}): Fetcher => ({
  name: 'http',
  async fetch(request: FetchRequest): Promise<FetchedPage> {
    const hl = new URL(request.url).searchParams.get('hl') ?? undefined;
    const userAgent = request.session?.userAgent ?? deviceProfile(request.device).userAgent;
    const headers = navigationHeaders(request.device, userAgent, hl);
    const cookies = cookieJarFor(request.session?.cookies ?? '');
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
      cookieJar: cookies.jar,
      timeout: { request: request.timeoutMs },
      signal: request.signal,
      // bytes, not text: decoding is the parse pool's work, off the event loop
      responseType: 'buffer',
    });
    return {
      url: request.url,
      finalUrl: response.url,
      status: response.statusCode,
      body: response.body,
      fetchedAt: new Date().toISOString(),
      cookies: cookies.header(),
      // each redirect followed was a request of its own (a /sorry/ redirect is two)
      requests: 1 + response.redirectUrls.length,
      // as transferred (before decompression); the decoded size where the client could not tell
      bytes: response.request.downloadProgress.transferred || response.body.byteLength,
    };
  },
  async close() {},
});
