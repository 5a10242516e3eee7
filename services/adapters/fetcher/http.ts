import { gotScraping, type PlainResponse, type Request } from 'got-scraping';
import { deviceProfile, navigationHeaders } from '../../ports/devices.js';
import { type FetchedPage, type Fetcher, type FetchRequest, MAX_PAGE_BYTES } from '../../ports/fetcher.js';
import { readBounded } from './boundedBody.js';
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

const GOOGLE_HOST = /^(?:www\.)?google\.[a-z]{2,3}(?:\.[a-z]{2})?$/i;

/**
 * Whether a redirect from `from` to `location` is followed: within the origin the crawler asked (its Google, or the
 * SERP_GOOGLE_ORIGIN mirror), or to Google's own CAPTCHA page (`/sorry/`, which the crawler must see as the final
 * URL). Anything else (a captive portal, a proxy's login page, another site) is not fetched: the crawler sees the
 * redirect itself and fails the page as one (docs/security.md).
 */
export const followsRedirect = (from: string, location: string): boolean => {
  try {
    const start = new URL(from);
    const to = new URL(location, from);
    if (to.origin === start.origin) return true;
    return to.protocol === 'https:' && GOOGLE_HOST.test(to.hostname) && to.pathname.startsWith('/sorry/');
  } catch {
    return false;
  }
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
    const linked = linkedSignal(request.signal);
    try {
      return await fetchWith(options, request, headers, cookies, linked.signal);
    } finally {
      linked.unlink();
    }
  },
  async close() {},
});

/**
 * A signal of the fetch's own that aborts with `outer`, linked only while the fetch runs. got adds an 'abort'
 * listener to the signal it is given and never removes it, and the crawl's page signal is `AbortSignal.any(…)`,
 * which Node keeps alive while it has a listener and has not aborted: through that listener each page's request, and
 * with it the body it read, stayed reachable for the life of the process (docs/decisions.md#memory). A plain
 * controller's signal is collected with the request; the link to `outer` is removed once the fetch is done.
 */
const linkedSignal = (outer: AbortSignal | undefined): { signal?: AbortSignal; unlink(): void } => {
  if (!outer) return { unlink() {} };
  const own = new AbortController();
  if (outer.aborted) {
    own.abort(outer.reason);
    return { signal: own.signal, unlink() {} };
  }
  const onAbort = () => own.abort(outer.reason);
  outer.addEventListener('abort', onAbort, { once: true });
  return { signal: own.signal, unlink: () => outer.removeEventListener('abort', onAbort) };
};

/**
 * A body whose Content-Length already says it is over the cap is refused before a byte of it is read: the wire's own
 * count stops any body at the cap (readBounded), so reading it would only fill buffers up to 8 MB to reach the same
 * answer, and those short-lived multi-megabyte buffers are what made the C allocator's arenas grow
 * (docs/operations.md#memory). A length the origin lies about below the cap is still stopped by the count.
 */
const declaredOver = (length: string | undefined, maxBytes: number): boolean => {
  const declared = length === undefined ? Number.NaN : Number(length);
  return Number.isSafeInteger(declared) && declared > maxBytes;
};

const refuseUnread = (stream: { destroy(): void }): { overLimit: true; wireBytes: number; body?: undefined } => {
  stream.destroy();
  return { overLimit: true, wireBytes: 0 };
};

const fetchWith = async (
  options: HttpFetcherOptions,
  request: FetchRequest,
  headers: ReturnType<typeof navigationHeaders>,
  cookies: ReturnType<typeof cookieJarFor>,
  signal: AbortSignal | undefined,
): Promise<FetchedPage> => {
  const stream = gotScraping.stream({
    url: request.url,
    headers,
    useHeaderGenerator: false,
    proxyUrl: request.session?.proxyUrl ?? options.proxyUrl,
    http2: options.http2 ?? true,
    throwHttpErrors: false,
    followRedirect: (res) => followsRedirect(request.url, new URL(res.headers.location ?? '', res.url).href),
    maxRedirects: options.maxRedirects ?? 5,
    retry: { limit: 0 },
    cookieJar: cookies.jar,
    timeout: { request: request.timeoutMs },
    signal,
    // the body is decoded here, by readBounded, so that neither its compressed nor its inflated size can pass the
    // cap: got's own decoding has no cap and would hold a bomb's whole inflated size (docs/security.md)
    decompress: false,
  });
  const response = await responseOf(stream);
  // bytes, not text: decoding is the parse pool's work, off the event loop
  const read = declaredOver(response.headers['content-length'], MAX_PAGE_BYTES)
    ? refuseUnread(stream)
    : await readBounded(stream, response.headers['content-encoding'], MAX_PAGE_BYTES);
  return {
    url: request.url,
    finalUrl: response.url,
    status: response.statusCode,
    body: read.body ?? Buffer.alloc(0),
    ...(read.overLimit ? { overLimit: true } : {}),
    fetchedAt: new Date().toISOString(),
    cookies: cookies.header(),
    // each redirect followed was a request of its own (a /sorry/ redirect is two)
    requests: 1 + response.redirectUrls.length,
    // as transferred (before decompression)
    bytes: read.wireBytes,
    ...(response.statusCode >= 300 && response.statusCode < 400 && response.headers.location
      ? { redirectedTo: new URL(response.headers.location, response.url).href }
      : {}),
  };
};

/**
 * The final response's head (redirects followed), or the error that came first; the body is still to be read. The
 * error listener stays: an error between the head and the body's pipeline must not be an unhandled 'error' event.
 */
const responseOf = (stream: Request) =>
  new Promise<PlainResponse>((resolve, reject) => {
    stream.once('response', resolve);
    stream.on('error', reject);
  });
