import type { RawHtmlRef } from '../../contracts/events.js';

/** Raw HTML lives here, never in events; events hold the reference and its SHA-256. */
export interface BlobStore {
  put(key: string, body: string | Buffer): Promise<RawHtmlRef>;
  /**
   * Stores content that is already gzipped (one member or several concatenated: the crawler compresses each page as
   * it arrives), described by the content's `sha256` and `bytes`; `get` returns the content.
   */
  putGzipped(key: string, gzipped: Buffer, content: { sha256: string; bytes: number }): Promise<RawHtmlRef>;
  /** undefined when the blob does not exist (expired or never written) */
  get(key: string): Promise<Buffer | undefined>;
  delete(key: string): Promise<void>;
}
