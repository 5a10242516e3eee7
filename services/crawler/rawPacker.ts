import { promisify } from 'node:util';
import { constants, gunzipSync, gzip, gzipSync } from 'node:zlib';
import { releaseBuffers } from '../buffers.js';
import type { BlobWriter } from '../ports/blobStore.js';
import type { PackedPage } from '../ports/pageParser.js';
import { inlineHashing, type JobHash } from './rawHash.js';

const gzipAsync = promisify(gzip);
/**
 * Level 1 with zlib's largest hash memory (memLevel 9, ~0.25 MB more state than the default 8 while a page is
 * compressed): on the fixture pages 5.0 ms a page instead of 6.5 ms, for the same size (0.366 of the HTML against
 * 0.365), and the same gzip any reader takes. Packing is half of a parse thread's time per page.
 */
const GZIP = { level: constants.Z_BEST_SPEED, memLevel: 9 };

/**
 * A job's raw HTML as the blob store keeps it: gzip members, one per page, and the content's SHA-256 and size.
 * `gzip` is absent when the members went to a blob writer as they came (createRawPacker's `sink`).
 */
export interface PackedRaw {
  gzip?: Buffer;
  sha256: string;
  bytes: number;
}

const chunkOf = (head: string, body: Uint8Array) => Buffer.concat([Buffer.from(head, 'utf8'), body]);

/** a page's chunk gzipped here and now (a parse worker's thread) */
export const packPage = (head: string, body: Uint8Array): PackedPage => ({
  head,
  body,
  member: gzipSync(chunkOf(head, body), GZIP),
});

/** the same on libuv's thread pool (the inline parser, which runs on the event loop) */
export const packPageAsync = async (head: string, body: Uint8Array): Promise<PackedPage> => ({
  head,
  body,
  member: await gzipAsync(chunkOf(head, body), GZIP),
});

/**
 * Packs a job's pages as they are taken, in order (docs/benchmarks.md#crawler-memory): each page arrives already
 * gzipped as its own member (where it was parsed, off the event loop) and goes to the blob writer (`sink`) at once, or
 * without one is kept until `finish`; its bytes go into the job's SHA-256 (`hash`: on the calling thread, or a thread
 * of its own, rawHash.ts), which takes them over and gives their memory back at once, not at V8's next full collection.
 * The concatenated members gunzip to exactly `assembleRawHtml` of the same pages, so `/raw` and `reparse` read the
 * same.
 */
export const createRawPacker = (sink?: BlobWriter, hash: JobHash = inlineHashing.start()) => {
  const members: Uint8Array[] = [];
  let pages = 0;
  let bytes = 0;
  let done = false;
  return {
    add(page: PackedPage) {
      bytes += Buffer.byteLength(page.head, 'utf8') + page.body.byteLength;
      pages += 1;
      // to the blob store now when there is a sink (it releases the member once written), else kept until finish
      if (sink) sink.append(page.member);
      else members.push(page.member);
      // the page's bytes are not read again here (its member holds them): the hash takes them
      hash.add(page.head, page.body);
    },
    get pages() {
      return pages;
    },
    /**
     * the job's raw HTML: its digest and size, and without a sink its members copied into one buffer and released,
     * so the packer cannot be used after
     */
    async finish(): Promise<PackedRaw> {
      done = true;
      const sha256 = await hash.digest();
      if (sink) return { sha256, bytes };
      const gzip = Buffer.concat(members);
      releaseBuffers(...members);
      members.length = 0;
      return { gzip, sha256, bytes };
    },
    /** a crawl that ends without a result: what was added is dropped (nothing once finished) */
    discard() {
      if (done) return;
      done = true;
      hash.drop();
      releaseBuffers(...members);
      members.length = 0;
    },
  };
};

export type RawPacker = ReturnType<typeof createRawPacker>;

/** the text of packed raw HTML (tests, tools) */
export const unpackRaw = (raw: PackedRaw): string => {
  if (!raw.gzip) throw new Error('this raw HTML went to a blob writer: read it from the blob store');
  return gunzipSync(raw.gzip).toString('utf8');
};
