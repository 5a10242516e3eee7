import type { Worker } from 'node:worker_threads';
import { ownBuffer } from '../buffers.js';
import { RenderError } from '../render/errors.js';
import type { PageRenderer, PageRendererOptions, RenderOutcome, RenderRequest } from '../render/pageRenderer.js';
import { startThread } from './boot.js';
import { reportThreadFault } from './threadFaults.js';

/** What the render thread is sent: a render, or the order to close its browser and end. */
export type ToRenderThread = { id: number; request: RenderRequest } | { close: true };

/** A render's answer: its outcome (the image's bytes moved, not copied), or the error the HTTP surfaces answer. */
export type FromRenderThread =
  | { id: number; outcome: RenderOutcome }
  | { id: number; error: { status: number; code: string; detail: string; headers: Record<string, string> } };

/** What the render thread starts with (its workerData). */
export type RenderThreadData = PageRendererOptions;

/**
 * The renderer of stored pages on a thread of its own (docs/screenshots.md#its-own-lane): Playwright's client, which
 * sends each page into Chromium and reads each image out of it as JSON over a pipe, ran on the event loop that answers
 * HTTP, ~80 ms of its CPU a render in pieces of up to a few tens of milliseconds (docs/screenshots.md#what-it-costs).
 * The thread runs `createPageRenderer` (its pool, queue, deadlines and spares) at the renderers' nice value, and this
 * handle only posts a request and takes back the outcome. A thread that dies is reported; the renders it held fail as
 * unavailable (503) and the next render starts another.
 */
export const createRenderThread = (options: PageRendererOptions): PageRenderer => {
  let worker: Worker | undefined;
  let nextId = 0;
  let closed = false;
  const waiting = new Map<number, { resolve: (o: RenderOutcome) => void; reject: (e: Error) => void }>();
  const lost = (w: Worker, why: string) => {
    if (worker !== w) return;
    worker = undefined;
    for (const pending of waiting.values())
      pending.reject(new RenderError(503, 'SERP_RENDER_UNAVAILABLE', `the render thread ${why}; try again`));
    waiting.clear();
    if (why !== 'closed') reportThreadFault('render', why);
  };

  const spawn = (): Worker => {
    const w = startThread('threads/renderWorker', { workerData: options satisfies RenderThreadData });
    w.unref();
    w.on('message', (m: FromRenderThread) => {
      const pending = waiting.get(m.id);
      waiting.delete(m.id);
      if (waiting.size === 0) w.unref();
      if (!pending) return;
      if ('error' in m)
        return pending.reject(new RenderError(m.error.status, m.error.code, m.error.detail, m.error.headers));
      const image = m.outcome.image;
      pending.resolve({
        ...m.outcome,
        image: image ? Buffer.from(image.buffer, image.byteOffset, image.byteLength) : undefined,
      });
    });
    w.on('error', (err) => lost(w, `failed: ${err.message}`));
    w.on('exit', (code) => lost(w, `exited (${code})`));
    worker = w;
    return w;
  };

  return {
    render(request) {
      if (closed)
        return Promise.reject(new RenderError(503, 'SERP_RENDER_UNAVAILABLE', 'the renderer is shutting down'));
      const w = worker ?? spawn();
      const id = ++nextId;
      return new Promise<RenderOutcome>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        w.ref();
        w.postMessage({ id, request } satisfies ToRenderThread);
      });
    },
    load() {
      // the thread keeps the queue; what this side knows is how many renders it has asked for and not had back
      const running = Math.min(waiting.size, Math.max(1, options.concurrency));
      return { running, waiting: waiting.size - running };
    },
    async close() {
      closed = true;
      const w = worker;
      if (!w) return;
      const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
      // forgotten first: its end is then no fault, and what it still held fails as unavailable
      lost(w, 'closed');
      w.ref();
      w.postMessage({ close: true } satisfies ToRenderThread);
      // its browser closes first; a thread that does not end in time is ended
      const timer = setTimeout(() => void w.terminate(), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
};

/** the outcome as the thread posts it, and the list of what moves with it (the image's own memory) */
export const postableOutcome = (outcome: RenderOutcome): { outcome: RenderOutcome; transfer: ArrayBuffer[] } => {
  const own = outcome.image ? ownBuffer(outcome.image) : undefined;
  return { outcome, transfer: own ? [own] : [] };
};
