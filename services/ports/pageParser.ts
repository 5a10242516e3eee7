import type { ParseContext, ParseOutcome } from '../../parser/index.js';

/**
 * The page-parser port: how the crawler has a fetched page read (services/crawler/readPage.ts on the calling thread,
 * services/threads/parsePool.ts on parse threads), what comes back and how a read fails. Here, below both, so that the
 * crawler and the threads that serve it share it without importing each other (docs/architecture.md#folders).
 */

/**
 * One page's part of the raw HTML, packed where it was parsed: `head` (separator and `<!-- serp-page … -->` marker,
 * parser/pages.ts `rawChunkHead`) and `body` (the page's bytes as fetched) make the chunk; `member` is the chunk
 * gzipped on its own.
 */
export interface PackedPage {
  head: string;
  body: Uint8Array;
  member: Uint8Array;
}

/** A fetched page read: what the parser made of it and, for a result page, its packed part of the job's raw HTML. */
export type PageRead =
  | { outcome: Extract<ParseOutcome, { kind: 'serp' }>; raw: PackedPage }
  /** a block or error page: it is never kept, so it is not packed */
  | { outcome: Exclude<ParseOutcome, { kind: 'serp' }>; raw?: undefined }
  /** more markup than any result page has (MAX_PAGE_TAGS): not parsed */
  | { outcome: { kind: 'too_large'; tags: number }; raw?: undefined };

/**
 * The most `<` a page may hold to be parsed. Google's result pages hold at most ~22,000 (every fixture page, scripts
 * included); the parser's tree costs ~140 bytes an element, so 250,000 keeps the densest page far inside a parse
 * thread's heap (PARSE_THREAD_LIMITS), where the byte limit alone does not (8 MB of bare nested tags is 2.8 million
 * elements, which ran a 384 MB thread out of heap). Counted before decoding, where the page is parsed.
 */
export const MAX_PAGE_TAGS = 250_000;

/** How the crawler reads a fetched page: on the event loop, or in a pool of worker threads. */
export interface PageParser {
  /**
   * Decodes `body` (the page's bytes, UTF-8), parses it, and packs a result page's raw chunk (`rawHead` + body,
   * gzipped). `body` may be handed to another thread: the caller must not use it afterwards, only `raw.body`.
   * `signal` (the crawl's) ends a read that is waiting or running; the pool's deadline ends one that runs too long
   * (ParseTimeoutError).
   */
  read(body: Uint8Array, context: ParseContext, rawHead: string, signal?: AbortSignal): Promise<PageRead>;
  close(): Promise<void>;
}

/** A page's parse ran past SERP_PARSE_TIMEOUT_MS: its thread was ended (and replaced) with the parse in it. */
export class ParseTimeoutError extends Error {
  readonly code = 'SERP_PARSE_TIMEOUT';
  constructor(readonly timeoutMs: number) {
    super(`the page took over ${timeoutMs} ms to parse`);
    this.name = 'ParseTimeoutError';
  }
}

/**
 * The parse thread died with the page in it (an uncaught error, out of heap): the pool replaced the thread, and the
 * page is worth another try (the crawler fetches it again: a transient failure, fetchPage.ts).
 */
export class ParseThreadError extends Error {
  readonly code = 'SERP_PARSE_THREAD';
  constructor(readonly reason: string) {
    super(`the parse thread ended while it read the page: ${reason}`);
    this.name = 'ParseThreadError';
  }
}
