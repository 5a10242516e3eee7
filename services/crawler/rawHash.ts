import { createHash } from 'node:crypto';
import { releaseBuffers } from '../buffers.js';

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

/** Where jobs' hashes are computed: here, or on a thread of their own (services/threads/hashThread.ts). */
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
