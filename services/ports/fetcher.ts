import type { Device } from '../../contracts/search.js';

/** One browser-like identity: the browser opens it, the http fetcher reuses its cookies until a block retires it. */
export interface CrawlSession {
  id: string;
  proxyUrl?: string;
  userAgent: string;
  /** Cookie header value collected from the session's browser visits */
  cookies: string;
}

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
  fetchedAt: string;
  /** cookies the session holds after this fetch */
  cookies?: string;
  /** a redirect the fetcher did not follow (another origin than the one asked): where it led */
  redirectedTo?: string;
}

export interface Fetcher {
  readonly name: 'http' | 'browser' | string;
  /** resolves with whatever the origin answered; classifying blocks is the crawler's job */
  fetch(request: FetchRequest): Promise<FetchedPage>;
  close(): Promise<void>;
}
