import { BroadcastChannel } from 'node:worker_threads';
import type { ParseTask } from '../../services/threads/parsePool.js';
import read from '../../services/threads/parseWorker.js';

/**
 * The parse thread as shipped (parseWorker.ts), plus a cell it bumps once piscina has posted each result: the test
 * (parsePool.test.ts) blocks on that cell, so it acts with the result queued on the port and its own event loop not
 * turned yet, the moment the race needs. Each thread sends its cell when it starts.
 */
/** the channel parsePool.test.ts listens on */
const POSTED_CHANNEL = 'serp-test-parse-posted';

const posted = new Int32Array(new SharedArrayBuffer(4));
const channel = new BroadcastChannel(POSTED_CHANNEL);
channel.postMessage(posted.buffer);
channel.unref();

export default async (task: ParseTask) => {
  const result = await read(task);
  // piscina posts the result in the microtasks that follow this return: an immediate runs after them
  setImmediate(() => {
    Atomics.add(posted, 0, 1);
    Atomics.notify(posted, 0);
  });
  return result;
};
