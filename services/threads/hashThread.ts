import type { Worker } from 'node:worker_threads';
import { ownBuffer, releaseBuffers } from '../buffers.js';
import type { JobHash, RawHashing } from '../crawler/rawHash.js';
import { startThread } from './boot.js';
import { faultCounter, reportThreadFault } from './threadFaults.js';

/**
 * What the hash thread is sent, in order on one port: a page of a job (its marker head, then its bytes, moved), the
 * order to give a job's digest, or to forget a job.
 */
export type ToHashThread =
  | { id: number; head: string; body: Uint8Array }
  | { id: number; digest: true }
  | { id: number; drop: true }
  /** fault injection (SERP_CHAOS_FAULTS, threadFaults.ts): the thread dies here */
  | { id: number; fault: true };

/** a job's digest, answering its `digest` message */
export type FromHashThread = { id: number; sha256: string };

/**
 * Hashing on a thread of its own (docs/architecture.md): SHA-256 of every page a crawl takes (~7 MB a job) was ~5% of the
 * event loop's busy time while crawls ran, in pieces of ~0.7 ms that every `/v1` request behind them waited out. A
 * job's hash is one sequential digest over its pages in order, which a pool cannot give (its tasks go to any thread),
 * so this is a single `node:worker_threads` thread (hashWorker.ts) fed by messages, whose order a port keeps; each
 * page's bytes move to it without a copy. The thread is referenced only while a digest is awaited. If it dies
 * (docs/architecture.md#when-a-thread-fails), it is reported, the jobs it held fail their digest (the crawl attempt
 * fails and is retried, never recorded with a wrong hash) and the next job starts a new thread.
 */
export const createHashThread = (): RawHashing => {
  let worker: Worker | undefined;
  let nextId = 0;
  const waiting = new Map<number, { resolve: (hex: string) => void; reject: (e: Error) => void }>();
  const faultDue = faultCounter('hash');
  /** `w` is gone (died, or closed): the digests it owed fail, and the next job starts a new thread */
  const lost = (w: Worker, why: string) => {
    if (worker !== w) return;
    worker = undefined;
    for (const pending of waiting.values()) pending.reject(new Error(`raw HTML hash thread ${why}`));
    waiting.clear();
    if (why !== 'closed') reportThreadFault('hash', why);
  };

  const spawn = () => {
    const w = startThread('threads/hashWorker', {
      resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 2 },
    });
    w.unref();
    w.on('message', (m: FromHashThread) => {
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
      const fault = faultDue();
      // a thread once lost is never `worker` again: a job fed to it never gets a digest of part of its pages
      const alive = () => worker === w;
      return {
        add(head, body) {
          if (!alive()) return releaseBuffers(body);
          const own = ownBuffer(body);
          w.postMessage({ id, head, body } satisfies ToHashThread, own ? [own] : []);
        },
        digest() {
          if (!alive()) return Promise.reject(new Error('raw HTML hash thread lost this job’s pages'));
          return new Promise<string>((resolve, reject) => {
            waiting.set(id, { resolve, reject });
            w.ref();
            if (fault) w.postMessage({ id, fault: true } satisfies ToHashThread);
            w.postMessage({ id, digest: true } satisfies ToHashThread);
          });
        },
        drop() {
          if (alive()) w.postMessage({ id, drop: true } satisfies ToHashThread);
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
