import type { RawHtmlRef } from '../../contracts/events.js';

/**
 * A blob written in parts as they come (docs/decisions.md#raw-html-and-finished-answers: the crawler's raw HTML, a gzip
 * member per page as each page is parsed), readable under its key only once committed: a reader sees the blob before it
 * or the whole new one.
 */
export interface BlobWriter {
  /**
   * Appends bytes that are already gzipped (whole members), after the parts before. The writer owns `gzipped` from
   * here on and may release its memory once it is stored. A failure surfaces at `commit`; after `commit` or `abort`
   * a part is dropped.
   */
  append(gzipped: Uint8Array): void;
  /** waits for every part, then makes the blob readable under its key, replacing any before it */
  commit(content: { sha256: string; bytes: number }): Promise<RawHtmlRef>;
  /** drops every part; the key keeps what it had */
  abort(): Promise<void>;
}

/** Raw HTML lives here, never in events; events hold the reference and its SHA-256. */
export interface BlobStore {
  put(key: string, body: string | Buffer): Promise<RawHtmlRef>;
  /**
   * Stores content that is already gzipped (one member or several concatenated: the crawler compresses each page as
   * it arrives), described by the content's `sha256` and `bytes`; `get` returns the content.
   */
  putGzipped(key: string, gzipped: Buffer, content: { sha256: string; bytes: number }): Promise<RawHtmlRef>;
  /** the same content written part by part as it comes (see BlobWriter) */
  openGzipped(key: string): BlobWriter;
  /** undefined when the blob does not exist (expired or never written) */
  get(key: string): Promise<Buffer | undefined>;
  /**
   * The blob as stored: gzip members (what `putGzipped`, `openGzipped` and `put` write), or for a blob written before
   * blobs were compressed, its content. An answer can send gzip members as they are (`Content-Encoding: gzip`).
   */
  getStored(key: string): Promise<Buffer | undefined>;
  delete(key: string): Promise<void>;
  /**
   * Deletes every blob whose key starts with `prefix` (a folder of keys: it ends with `/`), e.g. a search's renders
   * (docs/screenshots.md#what-it-costs); returns how many went. Idempotent.
   */
  deleteUnder(prefix: string): Promise<number>;
}
