import type { Browser, BrowserContext } from 'playwright-core';
import type { Device } from '../../../contracts/search.js';
import { acceptLanguage, deviceProfile } from '../../geo/devices.js';
import type { CrawlSession, FetchedPage, Fetcher, FetchRequest } from '../../ports/fetcher.js';
import { parseCookieHeader } from './cookies.js';

export interface BrowserFetcherOptions {
  /** Debian's Chromium; a browser is never downloaded */
  executablePath?: string;
  /** how long `capture_aio: true` waits after load for the AI Overview to stream in (default 8,000 ms) */
  aioWaitMs?: number;
  /** launch flags beyond the defaults */
  extraArgs?: readonly string[];
}

export interface BrowserFetcher extends Fetcher {
  /**
   * Opens a session the way a person would (the home page of `origin` through the session's proxy and user agent)
   * and returns the cookies Google gave it, for the http fetcher to reuse (docs/operations.md#which-fetcher).
   */
  openSession(origin: string, session: CrawlSession, device: Device, signal?: AbortSignal): Promise<string>;
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

/** Playwright's own launch gives every browser a fresh temporary user-data-dir, removed on close. */
export const createBrowserFetcher = (options: BrowserFetcherOptions = {}): BrowserFetcher => {
  let launching: Promise<Browser> | undefined;
  const aioWaitMs = options.aioWaitMs ?? 8_000;

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
        const response = await page.goto(request.url, {
          // without the AI Overview there is nothing to wait for once the HTML is parsed
          waitUntil: request.captureAio ? 'load' : 'domcontentloaded',
          timeout: request.timeoutMs,
        });
        if (request.captureAio) {
          // the overview may never come (not every query has one): a timeout here is an answer, not an error
          await page.waitForSelector(AIO_CONTENT, { state: 'attached', timeout: aioWaitMs }).catch(() => undefined);
        }
        return {
          url: request.url,
          finalUrl: page.url(),
          status: response?.status() ?? 0,
          body: Buffer.from(await page.content(), 'utf8'),
          fetchedAt: new Date().toISOString(),
          cookies: await cookieHeader(context, request.url),
        };
      });
    },
    async openSession(origin, session, device, signal) {
      const home = `${origin.replace(/\/+$/, '')}/`;
      const context = await contextFor(device, session, home);
      return withContext(context, signal, async () => {
        const page = await context.newPage();
        await page.goto(home, { waitUntil: 'load', timeout: 30_000 });
        return cookieHeader(context, home);
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
