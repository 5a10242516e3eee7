import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { ownBuffer, releaseBuffers } from '../buffers.js';
import { BACKGROUND_NICE } from './nice.js';

/**
 * A job's raw HTML SHA-256, fed page by page in order (the chunk's marker head, then the page's bytes). The page's
 * bytes belong to it once added: they are released (or moved to another thread) and must not be read again.
 */
export interface JobHash {
  add(head: string, body: Uint8Array): void;
  /** the hex digest of everything added; the hash cannot be used after */
  digest(): Promise<string>;
  /** forgets what was added (a crawl that ends without a result) */
  drop(): void;
}

/** Where jobs' hashes are computed. */
export interface RawHashing {
  start(): JobHash;
  close(): Promise<void>;
}

/** On the calling thread (tests, the CLI, SERP_PARSE_THREADS=0). */
export const inlineHashing: RawHashing = {
  start() {
    const hash = createHash('sha256');
    return {
      add(head, body) {
        hash.update(head, 'utf8');
        hash.update(body);
        releaseBuffers(body);
      },
      digest: async () => hash.digest('hex'),
      drop: () => undefined,
    };
  },
  close: async () => undefined,
};

/**
 * The thread's code: one SHA-256 per job id, fed in the order the messages come (a port keeps their order). A page's
 * bytes are released as soon as they are hashed, as releaseBuffers does (services/buffers.ts): this thread makes
 * almost no garbage of its own, so V8 would collect the pages it was handed only when their external memory forced
 * a collection, and they piled up (pipeline.ts, concurrency 32: peak RSS 434-439 MB against 372 MB without the thread).
 */
const THREAD = `
const { parentPort, MessageChannel } = require('node:worker_threads');
const { createHash } = require('node:crypto');
if (process.platform === 'linux') {
  try {
    require('node:os').setPriority(${BACKGROUND_NICE});
  } catch {}
}
const jobs = new Map();
const release = (view) => {
  if (view.byteOffset !== 0 || view.byteLength !== view.buffer.byteLength || view.byteLength === 0) return;
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(null, [view.buffer]);
  port1.close();
  port2.close();
};
parentPort.on('message', (m) => {
  if (m.body !== undefined) {
    let hash = jobs.get(m.id);
    if (!hash) jobs.set(m.id, (hash = createHash('sha256')));
    hash.update(m.head, 'utf8');
    hash.update(m.body);
    release(m.body);
  } else if (m.digest) {
    const hash = jobs.get(m.id) ?? createHash('sha256');
    jobs.delete(m.id);
    parentPort.postMessage({ id: m.id, sha256: hash.digest('hex') });
  } else jobs.delete(m.id);
});
`;

/**
 * Hashing on a thread of its own (docs/decisions.md#memory): SHA-256 of every page a crawl takes (~7 MB a job) was ~5%
 * of the event loop's busy time while crawls ran, in pieces of ~0.7 ms that every `/v1` request behind them waited out.
 * A job's hash is one sequential digest over its pages in order, which a pool cannot give (its tasks go to any thread),
 * so this is a single `node:worker_threads` thread fed by messages, whose order a port keeps; each page's bytes move to
 * it without a copy. Its code is a few lines of CommonJS given inline, so it needs no build or loader. The thread is
 * referenced only while a digest is awaited. If it dies, the jobs it held fail their digest (the crawl attempt fails
 * and is retried, never recorded with a wrong hash) and the next job starts a new thread.
 */
export const createHashThread = (): RawHashing => {
  let worker: Worker | undefined;
  let nextId = 0;
  const waiting = new Map<number, { resolve: (hex: string) => void; reject: (e: Error) => void }>();
  /** `w` is gone (died, or closed): the digests it owed fail, and the next job starts a new thread */
  const lost = (w: Worker, why: string) => {
    if (worker !== w) return;
    worker = undefined;
    for (const pending of waiting.values()) pending.reject(new Error(`raw HTML hash thread ${why}`));
    waiting.clear();
  };

  const spawn = () => {
    const w = new Worker(THREAD, {
      eval: true,
      resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 2 },
    });
    w.unref();
    w.on('message', (m: { id: number; sha256: string }) => {
      const pending = waiting.get(m.id);
      waiting.delete(m.id);
      if (waiting.size === 0) w.unref();
      pending?.resolve(m.sha256);
    });
    w.on('error', (err) => lost(w, `failed: ${err.message}`));
    w.on('exit', (code) => lost(w, `exited (${code})`));
    worker = w;
    return w;
  };

  return {
    start(): JobHash {
      const w = worker ?? spawn();
      const id = ++nextId;
      // a thread once lost is never `worker` again: a job fed to it never gets a digest of part of its pages
      const alive = () => worker === w;
      return {
        add(head, body) {
          if (!alive()) return releaseBuffers(body);
          const own = ownBuffer(body);
          w.postMessage({ id, head, body }, own ? [own] : []);
        },
        digest() {
          if (!alive()) return Promise.reject(new Error('raw HTML hash thread lost this job’s pages'));
          return new Promise<string>((resolve, reject) => {
            waiting.set(id, { resolve, reject });
            w.ref();
            w.postMessage({ id, digest: true });
          });
        },
        drop() {
          if (alive()) w.postMessage({ id, drop: true });
        },
      };
    },
    async close() {
      const w = worker;
      if (!w) return;
      lost(w, 'closed');
      await w.terminate();
    },
  };
};
