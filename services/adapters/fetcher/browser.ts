import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import type { Device } from '../../../contracts/search.js';
import { classifyPage } from '../../../parser/index.js';
import { acceptLanguage, deviceProfile } from '../../ports/devices.js';
import {
  type CrawlSession,
  type FetchedPage,
  type Fetcher,
  type FetchRequest,
  MAX_PAGE_BYTES,
  type OpenedSession,
} from '../../ports/fetcher.js';
import { parseCookieHeader } from './cookies.js';

export interface BrowserFetcherOptions {
  /** Debian's Chromium; a browser is never downloaded */
  executablePath?: string;
  /** how long `capture_aio: true` waits after load for the AI Overview to stream in (default 8,000 ms) */
  aioWaitMs?: number;
  /** launch flags beyond the defaults */
  extraArgs?: readonly string[];
  /** how long a JavaScript challenge's script may take to earn its token and reload the page (default 10,000 ms) */
  challengeWaitMs?: number;
}

export interface BrowserFetcher extends Fetcher {
  /**
   * Opens a session the way a person would (the home page of `origin` through the session's proxy and user agent)
   * and returns the cookies Google gave it, for the http fetcher to reuse (docs/fleet.md), with what the visit cost.
   * A JavaScript challenge on the way is passed as a browser passes it: its script runs and reloads the page.
   */
  openSession(origin: string, session: CrawlSession, device: Device, signal?: AbortSignal): Promise<OpenedSession>;
}

/**
 * Flags for a headless crawler on a shared server: no GPU, no QUIC (it bypasses HTTP proxies), none of Chrome's own
 * background traffic (updates, sync, field trials) that would spend proxy bandwidth and add noise.
 */
const LAUNCH_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Selectors of an AI Overview that holds content: the 2025–26 body
 * (`div.mZJni`) or the 2024 SGE paragraphs (`div.rPeykc`). The bare container is not enough: Google ships it empty.
 */
const AIO_CONTENT = 'div.YzCcne div.mZJni, div.mZJni, div.rPeykc';

/**
 * The main frame's documents as they come: a challenge's reload is a second document on the same URL, so waiting for
 * "the next one" must count from the moment the page opened, not from when the wait began (it may already be there).
 */
const documentsOf = (page: Page) => {
  const seen: Response[] = [];
  let requests = 0;
  let wake: (() => void) | undefined;
  page.on('request', (r) => {
    if (r.isNavigationRequest() && r.frame() === page.mainFrame()) requests += 1;
  });
  page.on('response', (r) => {
    if (!r.request().isNavigationRequest() || r.frame() !== page.mainFrame()) return;
    seen.push(r);
    wake?.();
  });
  return {
    requests: () => requests,
    count: () => seen.length,
    latest: () => seen.at(-1),
    /** resolves once more than `count` documents came, or after `ms` */
    after: (count: number, ms: number) =>
      new Promise<void>((resolve) => {
        if (seen.length > count) return resolve();
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        }
        wake = () => {
          if (seen.length > count) done();
        };
      }),
    /** what the documents weighed: bodies and headers as they came over the wire */
    bytes: async () => {
      let total = 0;
      for (const r of seen) {
        const sizes = await r
          .request()
          .sizes()
          .catch(() => undefined);
        total += sizes ? sizes.responseBodySize + sizes.responseHeadersSize : 0;
      }
      return total;
    },
  };
};

/**
 * The page's HTML as `page.content()` serializes it, once the navigation in progress (a challenge's reload) lets it be
 * read; undefined when it is over MAX_PAGE_BYTES. The size is judged inside the page and only a page within it crosses
 * into this process (docs/security.md#bodies-are-bounded-while-they-stream): a document of hundreds of megabytes is
 * one CDP message, held whole here, before anything could refuse it. A UTF-16 length within the cap may still be up to
 * three times as many UTF-8 bytes; the crawler refuses those by their bytes.
 */
const contentOf = async (page: Page, waitUntil: 'load' | 'domcontentloaded'): Promise<string | undefined> => {
  const read = async () => {
    const html = await page.evaluate((max) => {
      const root = document.documentElement;
      const doctype = document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '';
      const content = `${doctype}${root ? root.outerHTML : ''}`;
      return content.length > max ? null : content;
    }, MAX_PAGE_BYTES);
    return typeof html === 'string' ? html : undefined;
  };
  try {
    return await read();
  } catch {
    await page.waitForLoadState(waitUntil).catch(() => undefined);
    return read();
  }
};

/**
 * Counts the bytes of each document of the page as Chromium receives them, compressed and inflated, and ends the
 * page's renderer once one passes MAX_PAGE_BYTES: Chromium inflates a bomb itself, and its renderer parses all of it,
 * only for the page to be refused after. `Page.stopLoading` is no stop: the renderer takes it on the thread that is
 * busy parsing, and a 256 MB page of text then held it (and the context's close after it) for minutes. `Page.crash`
 * ends the renderer from its IO thread at once; the renderer is this fetch's alone (a context of its own, closed after).
 */
const guardDocuments = async (page: Page) => {
  const cdp = await page.context().newCDPSession(page);
  const documents = new Map<string, { encoded: number; decoded: number }>();
  let over = false;
  cdp.on('Network.responseReceived', (e) => {
    if (e.type === 'Document') documents.set(e.requestId, { encoded: 0, decoded: 0 });
  });
  cdp.on('Network.dataReceived', (e) => {
    const seen = documents.get(e.requestId);
    if (!seen || over) return;
    seen.encoded += e.encodedDataLength;
    seen.decoded += e.dataLength;
    if (seen.encoded > MAX_PAGE_BYTES || seen.decoded > MAX_PAGE_BYTES) {
      over = true;
      void cdp.send('Page.crash').catch(() => undefined);
    }
  });
  // it only counts: no copy of the bodies kept for this session to ask for
  await cdp.send('Network.enable', { maxTotalBufferSize: 0, maxResourceBufferSize: 0 });
  return {
    over: () => over,
    /** what the documents weighed until the stop: over the wire where Chromium says, else inflated */
    bytes: () => {
      let encoded = 0;
      let decoded = 0;
      for (const seen of documents.values()) {
        encoded += seen.encoded;
        decoded += seen.decoded;
      }
      return encoded || decoded;
    },
  };
};

/** Playwright's own launch gives every browser a fresh temporary user-data-dir, removed on close. */
export const createBrowserFetcher = (options: BrowserFetcherOptions = {}): BrowserFetcher => {
  let launching: Promise<Browser> | undefined;
  const aioWaitMs = options.aioWaitMs ?? 8_000;
  const challengeWaitMs = options.challengeWaitMs ?? 10_000;

  /**
   * Opens `url` and, when Google answers with its JavaScript challenge (SearchGuard), lets the challenge's script do
   * what it does in a person's browser: earn its token and reload. The page returned is the one after (or the
   * challenge again, when it could not be passed: the crawler then sees the block).
   */
  const visit = async (page: Page, url: string, waitUntil: 'load' | 'domcontentloaded', timeoutMs: number) => {
    const docs = documentsOf(page);
    const guard = await guardDocuments(page);
    /** the HTML, or undefined once a document went past the cap (the guard stopped it, or it serialized over it) */
    const html = async () => {
      if (guard.over()) return undefined;
      // the guard may end the renderer while the HTML is being read: that is the refusal too
      return contentOf(page, waitUntil).catch((err: unknown) => {
        if (guard.over()) return undefined;
        throw err;
      });
    };
    let response = await page.goto(url, { waitUntil, timeout: timeoutMs }).catch((err: unknown) => {
      // the guard's stop may end the navigation before its event came: the answer is the refusal, not the stop
      if (guard.over()) return docs.latest() ?? null;
      throw err;
    });
    let content = await html();
    for (let round = 0; round < 2 && content !== undefined && classifyPage(content) === 'js_challenge'; round++) {
      const before = docs.count();
      await docs.after(before, challengeWaitMs);
      if (docs.count() === before) break;
      await page.waitForLoadState(waitUntil).catch(() => undefined);
      response = docs.latest() ?? response;
      content = await html();
    }
    return { response, html: content, docs, reread: html, guard };
  };

  const browser = (): Promise<Browser> => {
    // Playwright is loaded with the first browser, not with the service: its bundles were ~50 MB of an embedded
    // service's RSS
    // (docs/decisions.md#memory), and a service on the http fetcher never launches one
    launching ??= import('playwright-core')
      .then(({ chromium }) =>
        chromium.launch({
          executablePath: options.executablePath ?? '/usr/bin/chromium',
          headless: true,
          args: [...LAUNCH_ARGS, ...(options.extraArgs ?? [])],
        }),
      )
      .catch((err) => {
        launching = undefined;
        throw err;
      });
    return launching;
  };

  const contextFor = async (
    device: Device,
    session: CrawlSession | undefined,
    url: string,
  ): Promise<BrowserContext> => {
    const profile = deviceProfile(device);
    const hl = new URL(url).searchParams.get('hl') ?? undefined;
    const context = await (await browser()).newContext({
      userAgent: session?.userAgent ?? profile.userAgent,
      viewport: profile.viewport,
      deviceScaleFactor: profile.deviceScaleFactor,
      isMobile: profile.isMobile,
      hasTouch: profile.hasTouch,
      locale: hl ?? 'en-US',
      // client hints must agree with the user agent, which Chromium's own hints (its real version) would not
      extraHTTPHeaders: { ...profile.clientHints, 'accept-language': acceptLanguage(hl) },
      ...(session?.proxyUrl ? { proxy: proxyOf(session.proxyUrl) } : {}),
    });
    if (session?.cookies) {
      const origin = new URL(url).origin;
      await context.addCookies(
        [...parseCookieHeader(session.cookies)].map(([name, value]) => ({ name, value, url: origin })),
      );
    }
    return context;
  };

  const cookieHeader = async (context: BrowserContext, url: string): Promise<string> =>
    (await context.cookies(url)).map((c) => `${c.name}=${c.value}`).join('; ');

  /** Closes the context when the job is aborted, which makes the pending navigation reject at once. */
  const withContext = async <T>(ctx: BrowserContext, signal: AbortSignal | undefined, run: () => Promise<T>) => {
    const onAbort = () => void ctx.close().catch(() => undefined);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await run();
    } finally {
      signal?.removeEventListener('abort', onAbort);
      await ctx.close().catch(() => undefined);
    }
  };

  return {
    name: 'browser',
    async fetch(request: FetchRequest): Promise<FetchedPage> {
      const context = await contextFor(request.device, request.session, request.url);
      return withContext(context, request.signal, async () => {
        const page = await context.newPage();
        // without the AI Overview there is nothing to wait for once the HTML is parsed
        const waitUntil = request.captureAio ? 'load' : 'domcontentloaded';
        const { response, html, docs, reread, guard } = await visit(page, request.url, waitUntil, request.timeoutMs);
        let body = html;
        if (request.captureAio && body !== undefined) {
          // the overview may never come (not every query has one): a timeout here is an answer, not an error
          await page.waitForSelector(AIO_CONTENT, { state: 'attached', timeout: aioWaitMs }).catch(() => undefined);
          body = await reread();
        }
        return {
          url: request.url,
          finalUrl: page.url(),
          status: response?.status() ?? 0,
          body: body === undefined ? Buffer.alloc(0) : Buffer.from(body, 'utf8'),
          ...(body === undefined ? { overLimit: true as const } : {}),
          fetchedAt: new Date().toISOString(),
          cookies: await cookieHeader(context, request.url),
          requests: Math.max(1, docs.requests()),
          // a renderer the guard ended never finishes its requests: their sizes would not come
          bytes: guard.over() ? guard.bytes() : await docs.bytes(),
        };
      });
    },
    async openSession(origin, session, device, signal) {
      const home = `${origin.replace(/\/+$/, '')}/`;
      const context = await contextFor(device, session, home);
      return withContext(context, signal, async () => {
        const page = await context.newPage();
        const { html, response, docs } = await visit(page, home, 'load', 30_000);
        const kind = classifyPage(html ?? '', { status: response?.status(), finalUrl: page.url() });
        return {
          cookies: await cookieHeader(context, home),
          requests: Math.max(1, docs.requests()),
          bytes: await docs.bytes(),
          // a banned address is sent to /sorry/ whatever it asks for, the home page included
          ...(kind === 'captcha' || response?.status() === 429
            ? { blocked: kind === 'captcha' ? 'captcha' : 'rate_limited' }
            : {}),
        } satisfies OpenedSession;
      });
    },
    async close() {
      const pending = launching;
      launching = undefined;
      if (pending) await (await pending.catch(() => undefined))?.close();
    },
  };
};

/** Playwright wants credentials apart from the proxy URL. */
const proxyOf = (proxyUrl: string): { server: string; username?: string; password?: string } => {
  const u = new URL(proxyUrl);
  const username = decodeURIComponent(u.username);
  const password = decodeURIComponent(u.password);
  u.username = '';
  u.password = '';
  return { server: u.toString().replace(/\/$/, ''), ...(username ? { username, password } : {}) };
};
