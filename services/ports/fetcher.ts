import type { Device } from '../../contracts/search.js';

/** One browser-like identity: the browser opens it, the http fetcher reuses its cookies until a block retires it. */
export interface CrawlSession {
  id: string;
  proxyUrl?: string;
  /** the route it runs on, as reports name it: `proxy-2` (its place in SERP_PROXY_URLS) or `direct`; never a URL */
  route?: string;
  userAgent: string;
  /** Cookie header value collected from the session's browser visits */
  cookies: string;
}

/**
 * The largest page the crawler reads: Google's result pages are 0.3–3.5 MB. A fetcher stops reading a body at this
 * many bytes, counted both as they come over the wire and as they inflate, and answers `overLimit` instead of the body
 * (docs/security.md#bodies-are-bounded-while-they-stream); the crawler fails such a page as too large.
 */
export const MAX_PAGE_BYTES = 8 * 2 ** 20;

export interface FetchRequest {
  /** the full Google URL, `{origin}/search?q=…&start=…&…` */
  url: string;
  device: Device;
  session?: CrawlSession;
  /** true: wait for the AI Overview that streams in after load (browser only) */
  captureAio: boolean;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface FetchedPage {
  url: string;
  finalUrl: string;
  status: number;
  /** the page as received (decompressed), UTF-8; the crawler hands it to the parser without decoding it here */
  body: Buffer;
  /** the body went past MAX_PAGE_BYTES: the fetcher stopped reading it, closed the connection, and `body` is empty */
  overLimit?: true;
  fetchedAt: string;
  /** cookies the session holds after this fetch */
  cookies?: string;
  /** a redirect the fetcher did not follow (another origin than the one asked): where it led */
  redirectedTo?: string;
  /**
   * requests this fetch made to Google: redirects followed, a challenge's reload, each counts (default 1); what the
   * route's pacing is charged and the search's cost counts (docs/fleet.md)
   */
  requests?: number;
  /** bytes received for them, as they came over the wire where the fetcher can tell (else decoded) */
  bytes?: number;
}

/** What opening a session (a browser's visit to the home page) cost and earned. */
export interface OpenedSession {
  cookies: string;
  requests: number;
  bytes: number;
  /** the home page was a block (a CAPTCHA: the route is banned), not the page asked for */
  blocked?: 'captcha' | 'rate_limited';
}

export interface Fetcher {
  readonly name: 'http' | 'browser' | string;
  /** resolves with whatever the origin answered; classifying blocks is the crawler's job */
  fetch(request: FetchRequest): Promise<FetchedPage>;
  close(): Promise<void>;
}
