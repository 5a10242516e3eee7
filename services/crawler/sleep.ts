import { CrawlAbortedError } from './errors.js';

/** A wait that an abort ends at once (shutdown drain must not sit out a back-off or a cooldown). */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new CrawlAbortedError());
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new CrawlAbortedError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
