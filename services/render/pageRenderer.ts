import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import pLimit from 'p-limit';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
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

/**
 * A function that lowers every thread of `rootPid` and of its descendants to `nice` (Linux: a nice value is per
 * thread). It keeps the parent of each process it has read: a call lists /proc and reads the `stat` of only the
 * processes it has not seen before (a render's new renderer process, the machine's new processes), then sets the
 * nice value of every thread of the tree, which is cheap (a system call each) beside reading every process's `stat`
 * again (docs/screenshots.md#what-it-costs). A process id is taken again only once the kernel's ids wrap around,
 * so the parent kept for a live id is its own.
 */
const treeLowerer = (rootPid: number, nice: number): (() => void) => {
  const parentOf = new Map<number, number>();
  return () => {
    if (process.platform !== 'linux') return;
    const live = new Set<number>();
    for (const name of readdirSync('/proc')) {
      const pid = Number(name);
      if (!Number.isInteger(pid)) continue;
      live.add(pid);
      if (parentOf.has(pid)) continue;
      try {
        // the command may hold spaces and parentheses: the fields after its last ')' are fixed
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        parentOf.set(pid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      } catch {
        live.delete(pid); // the process ended while the folder was read
      }
    }
    const children = new Map<number, number[]>();
    for (const [pid, ppid] of parentOf) {
      if (!live.has(pid)) {
        parentOf.delete(pid);
        continue;
      }
      const list = children.get(ppid) ?? [];
      list.push(pid);
      children.set(ppid, list);
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
 * One round trip into the page after its content is set: it measures each marked element's rectangle in page
 * coordinates (its own box, or where it has none, `display: contents` or a zero-size wrapper, the union of its
 * descendants' boxes) and the page's height, then, when an image follows, readies the page for it as Playwright's
 * screenshot did before each image (its `animations: 'disabled'` and hidden caret, then the fonts): finite CSS
 * animations and transitions are finished, infinite ones cancelled, in the document, its shadow roots and its
 * same-origin frames, and text fields' carets made transparent. Measuring comes first, so an animation's end never
 * moves a rectangle. A string, not a function: a function's source is what crosses into the page, and a compiler's
 * helpers (tsx names its functions) do not exist there.
 */
const MEASURE_AND_READY = `async (names, forImage) => {
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
  const root = document.documentElement;
  const pageHeight = Math.ceil(root.scrollHeight);
  const pageWidth = Math.max(root.scrollWidth, document.body ? document.body.scrollWidth : 0);
  if (forImage) {
    const docs = [document];
    for (const frame of document.querySelectorAll('iframe,frame')) {
      try { if (frame.contentDocument) docs.push(frame.contentDocument); } catch (e) {}
    }
    const roots = [];
    for (const d of docs) {
      const collect = (r) => {
        roots.push(r);
        const w = (r.ownerDocument || r).createTreeWalker(r, NodeFilter.SHOW_ELEMENT);
        do { const n = w.currentNode; if (n.shadowRoot) collect(n.shadowRoot); } while (w.nextNode());
      };
      collect(d);
    }
    for (const r of roots) {
      r.querySelectorAll('input,textarea,[contenteditable]').forEach((el) => el.style.setProperty('caret-color', 'transparent', 'important'));
      for (const animation of r.getAnimations()) {
        if (!animation.effect || animation.playbackRate === 0) continue;
        try {
          if (Number.isFinite(animation.effect.getComputedTiming().endTime)) animation.finish();
          else animation.cancel();
        } catch (e) {}
      }
    }
    for (const d of docs) await d.fonts.ready;
  }
  return { rectangles, pageHeight, pageWidth };
}`;

/** What a render needs from its context and page, made before the render or while the one before it ran. */
interface Prepared {
  context: BrowserContext;
  page: Page;
  cdp: CDPSession;
  /** requests the page tried and that were refused */
  blocked: number;
  crashed: boolean;
}

/** The options of a render's context: two renders with the same key may use each other's spare. */
interface ContextShape {
  width: number;
  height: number;
  scale: number;
  device: DeviceProfile;
}

/**
 * Stored pages rendered in Chromium, offline (docs/screenshots.md): one browser of its own (never the fetcher's), a
 * context per render with the search's device, the page's scripts off, and every request but `data:` refused. At
 * most `concurrency` renders at once and `queue` waiting; each has a deadline after which its context is closed, so a
 * page that hangs or crashes its renderer fails that render only. The browser is launched at the first render and
 * launched again after it dies.
 *
 * A render of a device's own width and scale takes a context made ahead for it (its spare), and makes the next one
 * while it runs: a new context and its page (a renderer process) were a fifth of a first screen's time
 * (docs/screenshots.md#what-it-costs). A spare is used once and closed after its render like any context; there is
 * at most one per device shape, made only after a render of that shape.
 */
export const createPageRenderer = (options: PageRendererOptions): PageRenderer => {
  const limit = pLimit(Math.max(1, options.concurrency));
  const marker = `--serp-render-pool=${process.pid}-${Math.random().toString(36).slice(2)}`;
  let launching: Promise<Browser> | undefined;
  let closed = false;
  const spares = new Map<string, Promise<Prepared>>();
  /**
   * Every thread of the browser's processes to `options.nice`, again at each render's steps: Chromium starts a
   * renderer process per page and sets some threads' priorities itself (raising its display threads where it may),
   * so a lowering at launch alone does not hold.
   */
  let lower = (): void => undefined;

  const browser = async (): Promise<Browser> => {
    launching ??= import('playwright-core')
      .then(({ chromium }) =>
        chromium.launch({ executablePath: options.executablePath, args: [...LAUNCH_ARGS, marker] }),
      )
      .then((b) => {
        b.on('disconnected', () => {
          launching = undefined;
          spares.clear();
        });
        const pid = options.nice === undefined ? undefined : browserPid(marker);
        lower = pid === undefined || options.nice === undefined ? () => undefined : treeLowerer(pid, options.nice);
        lower();
        return b;
      })
      .catch((err: unknown) => {
        launching = undefined;
        throw new RenderError(503, 'SERP_RENDER_UNAVAILABLE', `the renderer's Chromium did not start: ${String(err)}`);
      });
    return launching;
  };

  const shapeOf = (request: RenderRequest): ContextShape => ({
    width: request.image?.width ?? request.device.viewport.width,
    height: request.device.viewport.height,
    scale: request.image?.scale ?? request.device.deviceScaleFactor,
    device: request.device,
  });
  const keyOf = (shape: ContextShape) =>
    JSON.stringify([
      shape.width,
      shape.height,
      shape.scale,
      shape.device.userAgent,
      shape.device.isMobile,
      shape.device.hasTouch,
    ]);
  /** the device's own width and scale: what positions and most screenshots ask for */
  const isDeviceShape = (shape: ContextShape) =>
    shape.width === shape.device.viewport.width && shape.scale === shape.device.deviceScaleFactor;

  const prepare = async (shape: ContextShape): Promise<Prepared> => {
    const d = shape.device;
    const context = await (await browser()).newContext({
      viewport: { width: shape.width, height: shape.height },
      userAgent: d.userAgent,
      deviceScaleFactor: shape.scale,
      isMobile: d.isMobile,
      hasTouch: d.hasTouch,
      // the stored page is what Google served; its scripts would only try to reach Google (docs/screenshots.md#scripts)
      javaScriptEnabled: false,
      serviceWorkers: 'block',
      acceptDownloads: false,
      bypassCSP: false,
    });
    try {
      const prepared = { context, blocked: 0, crashed: false } as Prepared;
      await context.route('**/*', (route) => {
        if (route.request().url().startsWith('data:')) return route.continue();
        prepared.blocked += 1;
        return route.abort('blockedbyclient');
      });
      prepared.page = await context.newPage();
      prepared.page.on('crash', () => {
        prepared.crashed = true;
      });
      prepared.cdp = await context.newCDPSession(prepared.page);
      lower();
      return prepared;
    } catch (err) {
      await context.close().catch(() => undefined);
      throw err;
    }
  };

  /** the spare made for `shape`, else a new context; a spare for the next render of the shape is started */
  const take = async (shape: ContextShape): Promise<{ prepared: Prepared; next?: Promise<unknown> }> => {
    if (!isDeviceShape(shape)) return { prepared: await prepare(shape) };
    const key = keyOf(shape);
    const spare = spares.get(key);
    const next = prepare(shape);
    // a spare that failed is dropped when it is taken; the render then makes its own
    next.catch(() => undefined);
    spares.set(key, next);
    const ready = await spare?.catch(() => undefined);
    if (ready && !ready.page.isClosed() && ready.context.browser()?.isConnected()) return { prepared: ready, next };
    if (ready) await ready.context.close().catch(() => undefined);
    return { prepared: await prepare(shape), next };
  };

  const renderOnce = async (request: RenderRequest): Promise<RenderOutcome> => {
    let timer: NodeJS.Timeout | undefined;
    let prepared: Prepared | undefined;
    let next: Promise<unknown> | undefined;
    let ended = false;
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
    try {
      const work = async (): Promise<RenderOutcome> => {
        const shape = shapeOf(request);
        const taken = await take(shape);
        next = taken.next;
        if (ended) {
          // the deadline passed while the context was made: nothing closes it but this
          await taken.prepared.context.close().catch(() => undefined);
          throw new Error('ended at its deadline');
        }
        prepared = taken.prepared;
        const { page, cdp } = prepared;
        // `load` waits for nothing on the network: every subresource is refused at once
        await page.setContent(withoutNoscript(request.html), { waitUntil: 'load', timeout: options.deadlineMs });
        lower();
        const measured = (await page.evaluate(
          `(${MEASURE_AND_READY})(${JSON.stringify(request.measure ?? [])}, ${request.image !== undefined})`,
        )) as { rectangles: Record<string, Rectangle | null>; pageHeight: number; pageWidth: number };
        const viewport = { width: shape.width, height: shape.height };
        let image: Buffer | undefined;
        if (request.image) {
          const { fullPage, format } = request.image;
          const height = fullPage ? Math.min(measured.pageHeight, MAX_IMAGE_SIDE) : viewport.height;
          // the whole page is drawn beyond the viewport only when it does not fit in it; a first screen never is
          // (docs/screenshots.md#screenshots)
          const beyond = fullPage && (measured.pageHeight > viewport.height || measured.pageWidth > viewport.width);
          image = await screenshotOf(cdp, format, { width: viewport.width, height }, shape.scale, beyond);
        }
        return {
          image,
          viewport,
          pageHeight: measured.pageHeight,
          rectangles: measured.rectangles,
          blockedRequests: prepared.blocked,
        };
      };
      return await Promise.race([work(), deadline]);
    } catch (err) {
      if (err instanceof RenderError) throw err;
      if (prepared?.crashed) throw new RenderError(422, 'SERP_RENDER_FAILED', 'the stored page crashed the renderer');
      throw new RenderError(422, 'SERP_RENDER_FAILED', `the stored page could not be rendered: ${firstLine(err)}`);
    } finally {
      ended = true;
      clearTimeout(timer);
      // closing the context ends its renderer process, whatever it is doing
      await prepared?.context.close().catch(() => undefined);
      // the next render's spare, begun with this one, is lowered with the rest of the tree before this render ends
      if (next) {
        await next.catch(() => undefined);
        lower();
      }
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
      spares.clear();
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
 * The page as an image, in one DevTools call on the render's own session (PNG or WebP alike), clipped to `size` in
 * CSS pixels and drawn at the context's scale. A first screen is drawn as the viewport shows it; only a whole page
 * taller than the viewport is laid out beyond it (`captureBeyondViewport`), as Playwright's full-page screenshot did.
 */
const screenshotOf = async (
  cdp: CDPSession,
  format: 'png' | 'webp',
  size: { width: number; height: number },
  scale: number,
  beyond: boolean,
): Promise<Buffer> => {
  const shot = (await cdp.send('Page.captureScreenshot', {
    format,
    ...(format === 'webp' ? { quality: 80 } : {}),
    captureBeyondViewport: beyond,
    clip: { x: 0, y: 0, ...size, scale },
  })) as { data: string };
  return Buffer.from(shot.data, 'base64');
};
