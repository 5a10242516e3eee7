import type { RawHtmlRef } from '../../contracts/events.js';

/** Raw HTML lives here, never in events; events hold the reference and its SHA-256. */
export interface BlobStore {
  put(key: string, body: string | Buffer): Promise<RawHtmlRef>;
  /** undefined when the blob does not exist (expired or never written) */
  get(key: string): Promise<Buffer | undefined>;
  delete(key: string): Promise<void>;
}
