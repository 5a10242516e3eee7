import { MessageChannel } from 'node:worker_threads';

/**
 * An ArrayBuffer that only this view uses, so it can move to another thread (or be released) instead of being
 * copied. A view into a shared one (Node's pool for small Buffers) is not: moving it would take the memory from under
 * every other Buffer in it.
 */
export const ownBuffer = (view: Uint8Array): ArrayBuffer | undefined =>
  view.byteOffset === 0 && view.byteLength === view.buffer.byteLength && view.buffer instanceof ArrayBuffer
    ? view.buffer
    : undefined;

/**
 * Gives the memory of buffers nobody reads any more back now, not at the next full collection
 * (docs/decisions.md#memory). V8 frees a dropped ArrayBuffer's bytes only when a collection finds it dead, and a page's
 * bytes usually live long enough to be promoted, so they waited for a mark-compact: in the crawler that left 100+ MB of
 * dead pages in RSS at concurrency 32. Node 20 has no `ArrayBuffer.prototype.transfer` to detach one in place; moving
 * it into a message on a channel that is closed at once does the same: the message, and with it the bytes, is destroyed
 * with the channel. Each view's buffer is detached (its length becomes 0), so only a caller that owns the bytes, and
 * hands them to nobody who reads them later, may call this. Views into a shared buffer are left to the collector.
 */
export const releaseBuffers = (...views: readonly Uint8Array[]): void => {
  const own = [...new Set(views.map(ownBuffer).filter((b) => b !== undefined && b.byteLength > 0))] as ArrayBuffer[];
  if (own.length === 0) return;
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(null, own);
  port1.close();
  port2.close();
};
