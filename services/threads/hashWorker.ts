import { createHash, type Hash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { releaseBuffers } from '../buffers.js';
import type { FromHashThread, ToHashThread } from './hashThread.js';
import { runInBackground } from './nice.js';
import { injectedFault } from './threadFaults.js';

/**
 * The raw HTML hash thread (hashThread.ts): one SHA-256 per job id, fed in the order the messages come (a port keeps
 * their order). A page's bytes are released as soon as they are hashed (services/buffers.ts): this thread makes
 * almost no garbage of its own, so V8 would collect the pages it was handed only when their external memory forced a
 * collection, and they piled up (pipeline.ts, concurrency 32: peak RSS 434-439 MB against 372 MB without the thread).
 * Below the event loop that answers HTTP, as the parse threads are (nice.ts).
 */
runInBackground();
const port = parentPort;
if (!port) throw new Error('hashWorker runs as a worker thread');
const jobs = new Map<number, Hash>();

port.on('message', (m: ToHashThread) => {
  // a real fault (SERP_CHAOS_FAULTS): an error nothing catches ends this thread with the jobs it holds
  if ('fault' in m) throw injectedFault('hash');
  if ('body' in m) {
    let hash = jobs.get(m.id);
    if (!hash) {
      hash = createHash('sha256');
      jobs.set(m.id, hash);
    }
    hash.update(m.head, 'utf8');
    hash.update(m.body);
    releaseBuffers(m.body);
  } else if ('digest' in m) {
    const hash = jobs.get(m.id) ?? createHash('sha256');
    jobs.delete(m.id);
    port.postMessage({ id: m.id, sha256: hash.digest('hex') } satisfies FromHashThread);
  } else jobs.delete(m.id);
});
