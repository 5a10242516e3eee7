import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import pLimit from 'p-limit';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { DeviceProfile } from '../ports/devices.js';
import { RenderError } from './errors.js';

/** What one render asks for: the page, the device it was searched on, and what to take from it. */
export interface RenderRequest {
  html: string;
  device: DeviceProfile;
  /** a screenshot, or none (pixel positions only) */
  image?: { format: 'png' | 'webp'; fullPage: boolean; width?: number; scale?: number };
  /** attribute names (`data-serp-k3`) whose elements' rectangles to measure, in page coordinates */
  measure?: readonly string[];
}

export interface Rectangle {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface RenderOutcome {
  /** the encoded image, when one was asked for */
  image?: Buffer;
  /** the viewport the page was laid out in (CSS pixels) */
  viewport: { width: number; height: number };
  /** the page's whole height (CSS pixels) */
  pageHeight: number;
  /** per name asked for, its element's rectangle; null when the element is missing or has no box */
  rectangles: Record<string, Rectangle | null>;
  /** network requests the page tried and that were refused (none leave the machine) */
  blockedRequests: number;
}

export interface PageRenderer {
  render(request: RenderRequest): Promise<RenderOutcome>;
  /** renders running and waiting, for the metrics and the bench */
  load(): { running: number; waiting: number };
  close(): Promise<void>;
}

export interface PageRendererOptions {
  executablePath: string;
  /** renders at once (SERP_RENDER_CONCURRENCY) */
  concurrency: number;
  /** renders that may wait for a slot before a request is refused with 503 (SERP_RENDER_QUEUE) */
  queue: number;
  /** how long one render may take, from its start, before it is ended (SERP_RENDER_DEADLINE_MS) */
  deadlineMs: number;
  /** the nice value of Chromium's processes (docs/screenshots.md#its-own-lane); undefined leaves them as started */
  nice?: number;
}

/**
 * Flags for rendering stored pages: no GPU, and no traffic of Chromium's own (updates, sync, field trials). No host
 * name resolves (`~NOTFOUND`): the page router below refuses every request already, and this is the second wall
 * for whatever Chromium might fetch outside a page (docs/screenshots.md#nothing-leaves-the-machine).
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
  '--disable-domain-reliability',
  '--no-pings',
  '--host-resolver-rules=MAP * ~NOTFOUND',
];

/** Chromium's largest screenshot side; a full page taller than this is cut at it */
const MAX_IMAGE_SIDE = 16_384;

/** every thread of `pid` and of its descendants, lowered to `nice` (Linux: a nice value is per thread) */
const reniceTree = (rootPid: number, nice: number): void => {
  if (process.platform !== 'linux') return;
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // the command may hold spaces and parentheses: the fields after its last ')' are fixed
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch {
      // the process ended while the folder was read
    }
  }
  const pending = [rootPid];
  for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
    try {
      for (const task of readdirSync(`/proc/${pid}/task`)) setPriority(Number(task), nice);
    } catch {
      // ended, or a sandbox that refuses: it keeps its priority
    }
    pending.push(...(children.get(pid) ?? []));
  }
};

/** the Chromium this process launched with `marker` among its flags (its browser process) */
const browserPid = (marker: string): number | undefined => {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker)) return Number(name);
    } catch {
      // ended
    }
  }
  return undefined;
};

/**
 * Measures, in the page, each marked element's rectangle in page coordinates: its own box, or where it has none
 * (`display: contents`, a zero-size wrapper) the union of its descendants' boxes. A string, not a function: a
 * function's source is what crosses into the page, and a compiler's helpers (tsx names its functions) do not exist there.
 */
const MEASURE_IN_PAGE = `(names) => {
  const rectOf = (el) => {
    const own = el.getBoundingClientRect();
    const boxes = own.width > 0 && own.height > 0 ? [own] : Array.from(el.querySelectorAll('*'))
      .map((e) => e.getBoundingClientRect())
      .filter((r) => r.width > 0 && r.height > 0);
    if (!boxes.length) return null;
    const left = Math.min(...boxes.map((r) => r.left));
    const top = Math.min(...boxes.map((r) => r.top));
    const right = Math.max(...boxes.map((r) => r.right));
    const bottom = Math.max(...boxes.map((r) => r.bottom));
    return {
      x: Math.round(left + window.scrollX),
      y: Math.round(top + window.scrollY),
      width: Math.round(right - left),
      height: Math.round(bottom - top),
    };
  };
  const rectangles = {};
  for (const name of names) {
    const el = document.querySelector('[' + name + ']');
    rectangles[name] = el ? rectOf(el) : null;
  }
  return { rectangles, pageHeight: Math.ceil(document.documentElement.scrollHeight) };
}`;

/**
 * Stored pages rendered in Chromium, offline (docs/screenshots.md): one browser of its own (never the fetcher's), a
 * context per render with the search's device, the page's scripts off, and every request but `data:` refused. At
 * most `concurrency` renders at once and `queue` waiting; each has a deadline after which its context is closed, so a
 * page that hangs or crashes its renderer fails that render only. The browser is launched at the first render and
 * launched again after it dies.
 */
export const createPageRenderer = (options: PageRendererOptions): PageRenderer => {
  const limit = pLimit(Math.max(1, options.concurrency));
  const marker = `--serp-render-pool=${process.pid}-${Math.random().toString(36).slice(2)}`;
  let launching: Promise<Browser> | undefined;
  let closed = false;
  let pid: number | undefined;
  /**
   * Every thread of the browser's processes to `options.nice`, again at each render's steps: Chromium starts a
   * renderer process per page and sets some threads' priorities itself (raising its display threads where it may),
   * so a lowering at launch alone does not hold.
   */
  const lower = () => {
    if (pid !== undefined && options.nice !== undefined) reniceTree(pid, options.nice);
  };

  const browser = async (): Promise<Browser> => {
    launching ??= import('playwright-core')
      .then(({ chromium }) =>
        chromium.launch({ executablePath: options.executablePath, args: [...LAUNCH_ARGS, marker] }),
      )
      .then((b) => {
        b.on('disconnected', () => {
          launching = undefined;
        });
        pid = options.nice === undefined ? undefined : browserPid(marker);
        lower();
        return b;
      })
      .catch((err: unknown) => {
        launching = undefined;
        throw new RenderError(503, 'SERP_RENDER_UNAVAILABLE', `the renderer's Chromium did not start: ${String(err)}`);
      });
    return launching;
  };

  const contextFor = async (request: RenderRequest): Promise<BrowserContext> => {
    const d = request.device;
    const width = request.image?.width ?? d.viewport.width;
    const context = await (await browser()).newContext({
      viewport: { width, height: d.viewport.height },
      userAgent: d.userAgent,
      deviceScaleFactor: request.image?.scale ?? d.deviceScaleFactor,
      isMobile: d.isMobile,
      hasTouch: d.hasTouch,
      // the stored page is what Google served; its scripts would only try to reach Google (docs/screenshots.md#scripts)
      javaScriptEnabled: false,
      serviceWorkers: 'block',
      acceptDownloads: false,
      bypassCSP: false,
    });
    return context;
  };

  const renderOnce = async (request: RenderRequest): Promise<RenderOutcome> => {
    const context = await contextFor(request);
    let blocked = 0;
    let crashed = false;
    let timer: NodeJS.Timeout | undefined;
    try {
      await context.route('**/*', (route) => {
        if (route.request().url().startsWith('data:')) return route.continue();
        blocked += 1;
        return route.abort('blockedbyclient');
      });
      const page: Page = await context.newPage();
      lower();
      page.on('crash', () => {
        crashed = true;
      });
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new RenderError(
                503,
                'SERP_RENDER_TIMEOUT',
                `the render took more than ${options.deadlineMs} ms and was ended; try again later`,
                { 'Retry-After': '5' },
              ),
            ),
          options.deadlineMs,
        );
      });
      const work = async (): Promise<RenderOutcome> => {
        // `load` waits for nothing on the network: every subresource is refused at once
        await page.setContent(withoutNoscript(request.html), { waitUntil: 'load', timeout: options.deadlineMs });
        lower();
        const measured = (await page.evaluate(`(${MEASURE_IN_PAGE})(${JSON.stringify(request.measure ?? [])})`)) as {
          rectangles: Record<string, Rectangle | null>;
          pageHeight: number;
        };
        const viewport = page.viewportSize() ?? request.device.viewport;
        let image: Buffer | undefined;
        if (request.image) {
          const height = request.image.fullPage ? Math.min(measured.pageHeight, MAX_IMAGE_SIDE) : viewport.height;
          image = await screenshotOf(page, request.image.format, { width: viewport.width, height });
        }
        return {
          image,
          viewport,
          pageHeight: measured.pageHeight,
          rectangles: measured.rectangles,
          blockedRequests: blocked,
        };
      };
      return await Promise.race([work(), deadline]);
    } catch (err) {
      if (err instanceof RenderError) throw err;
      if (crashed) throw new RenderError(422, 'SERP_RENDER_FAILED', 'the stored page crashed the renderer');
      throw new RenderError(422, 'SERP_RENDER_FAILED', `the stored page could not be rendered: ${firstLine(err)}`);
    } finally {
      clearTimeout(timer);
      // closing the context ends its renderer process, whatever it is doing
      await context.close().catch(() => undefined);
    }
  };

  return {
    render(request) {
      if (closed)
        return Promise.reject(new RenderError(503, 'SERP_RENDER_UNAVAILABLE', 'the renderer is shutting down'));
      if (limit.pendingCount >= options.queue) {
        return Promise.reject(
          new RenderError(
            503,
            'SERP_RENDER_BUSY',
            `${limit.pendingCount} renders are waiting: try again in a few seconds`,
            {
              'Retry-After': '5',
            },
          ),
        );
      }
      return limit(() => renderOnce(request));
    },
    load: () => ({ running: limit.activeCount, waiting: limit.pendingCount }),
    async close() {
      closed = true;
      limit.clearQueue();
      const pending = launching;
      launching = undefined;
      const b = await pending?.catch(() => undefined);
      await b?.close().catch(() => undefined);
    },
  };
};

/**
 * The page without its `<noscript>` blocks: with scripts off Chromium would show them, and Google's hide the whole page
 * (`table,div,span,p{display:none}`) behind a refresh to its "enable JavaScript" page. Google served the page to a
 * browser with scripts on, which never shows them (docs/screenshots.md#scripts).
 */
export const withoutNoscript = (html: string): string => html.replace(/<noscript\b[^>]*>[\s\S]*?<\/noscript\s*>/gi, '');

const firstLine = (err: unknown): string => String(err instanceof Error ? err.message : err).split('\n')[0] ?? '';

/**
 * The page as an image: PNG through Playwright; WebP through the DevTools protocol (Playwright takes PNG and JPEG
 * only), clipped to the same area.
 */
const screenshotOf = async (
  page: Page,
  format: 'png' | 'webp',
  size: { width: number; height: number },
): Promise<Buffer> => {
  if (format === 'png') {
    return page.screenshot({
      type: 'png',
      clip: { x: 0, y: 0, ...size },
      fullPage: size.height > 0,
      animations: 'disabled',
    });
  }
  const cdp = await page.context().newCDPSession(page);
  try {
    const shot = (await cdp.send('Page.captureScreenshot', {
      format: 'webp',
      quality: 80,
      captureBeyondViewport: true,
      clip: { x: 0, y: 0, ...size, scale: 1 },
    })) as { data: string };
    return Buffer.from(shot.data, 'base64');
  } finally {
    await cdp.detach().catch(() => undefined);
  }
};
