import { threadId } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { ownBuffer } from '../buffers.js';
import { packPage } from '../crawler/rawPacker.js';
import { readPage } from '../crawler/readPage.js';
import type { PageRead } from '../ports/pageParser.js';
import { runInBackground } from './nice.js';
import type { ParseTask } from './parsePool.js';
import { injectedFault } from './threadFaults.js';

/**
 * The parse threads yield to the event loop that answers HTTP (docs/architecture.md): with a thread per core, parsing a
 * burst of pages would otherwise take the cores from under it and multiply read latency. On Linux a nice value is a
 * thread's own (setpriority with pid 0 names the calling thread), so this lowers only this worker; raising it needs
 * no privilege. Elsewhere it is the process's, so it is done only on Linux.
 */
runInBackground();

/**
 * One page, in a worker thread of the crawler's parse pool (parsePool.ts): decode, parse, and gzip a
 * result page's raw chunk here; the page's bytes and the gzip member move back to the crawler without a copy.
 */
export default async ({ body, context, rawHead, started, fault }: ParseTask): Promise<PageRead> => {
  // the deadline counts from here (parsePool.ts createDeadlines), and a failed task tells its thread's death by its id
  const cells = new BigInt64Array(started);
  Atomics.store(cells, 1, BigInt(threadId));
  Atomics.store(cells, 0, BigInt(Date.now()));
  if (fault) {
    // a real fault, as a bug or a crash would be: an error nothing catches, which ends this thread with the page in it
    setImmediate(() => {
      throw injectedFault('parse');
    });
    return new Promise<PageRead>(() => undefined);
  }
  const read = await readPage(body, context, rawHead, packPage);
  if (!read.raw) return read;
  const moving = [ownBuffer(read.raw.body), ownBuffer(read.raw.member)].filter((b) => b !== undefined);
  // piscina's Transferable: the value to send and the buffers to move with it
  const transferable = { [Piscina.transferableSymbol]: moving, [Piscina.valueSymbol]: read };
  return Piscina.move(transferable as unknown as Parameters<typeof Piscina.move>[0]) as unknown as PageRead;
};
