import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { RenderError } from '../render/errors.js';
import { createPageRenderer } from '../render/pageRenderer.js';
import { type FromRenderThread, postableOutcome, type RenderThreadData, type ToRenderThread } from './renderThread.js';

/**
 * The render thread (renderThread.ts): Playwright's client and the renderer's pool run here, off the event loop that
 * answers HTTP. The thread runs at the nice value of the Chromium it drives (docs/screenshots.md#its-own-lane), so its
 * share of a render waits behind the event loop as Chromium's does; the browser it starts inherits it (Linux: a nice
 * value is the thread's own, and a process started from a thread starts with that thread's).
 */
const options = workerData as RenderThreadData;
if (process.platform === 'linux' && options.nice !== undefined) {
  try {
    setPriority(options.nice);
  } catch {
    // refused: the thread keeps the normal priority
  }
}
const port = parentPort;
if (!port) throw new Error('renderWorker runs as a worker thread');
const renderer = createPageRenderer(options);

port.on('message', (m: ToRenderThread) => {
  if ('close' in m) {
    void renderer.close().finally(() => port.close());
    return;
  }
  renderer.render(m.request).then(
    (outcome) => {
      const { transfer } = postableOutcome(outcome);
      port.postMessage({ id: m.id, outcome } satisfies FromRenderThread, transfer);
    },
    (err: unknown) => {
      const e =
        err instanceof RenderError
          ? err
          : new RenderError(422, 'SERP_RENDER_FAILED', `the stored page could not be rendered: ${String(err)}`);
      port.postMessage({
        id: m.id,
        error: { status: e.status, code: e.code, detail: e.message, headers: e.headers },
      } satisfies FromRenderThread);
    },
  );
});
