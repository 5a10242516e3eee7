import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { constants, gunzipSync, gzip } from 'node:zlib';
import { type RawPage, rawHtmlChunk } from '../../parser/pages.js';

const gzipAsync = promisify(gzip);

/** A job's raw HTML as the blob store keeps it: gzip members, one per page, and the content's SHA-256 and size. */
export interface PackedRaw {
  gzip: Buffer;
  sha256: string;
  bytes: number;
}

/**
 * Packs a job's pages as they are taken, in order (issue 14, crawler memory): each page's marker and HTML is hashed
 * into the job's SHA-256 and gzipped as its own member on libuv's thread pool, and the page's text can be let go at
 * once; a job in flight holds its pages compressed (~0.3× the HTML) instead of the whole text until it ends. The
 * concatenated members gunzip to exactly `assembleRawHtml` of the same pages, so `/raw` and `reparse` read the same.
 */
export const createRawPacker = () => {
  const hash = createHash('sha256');
  const members: Array<Promise<Buffer>> = [];
  let bytes = 0;
  return {
    add(page: RawPage) {
      const chunk = Buffer.from(rawHtmlChunk(page, members.length === 0), 'utf8');
      hash.update(chunk);
      bytes += chunk.length;
      members.push(gzipAsync(chunk, { level: constants.Z_BEST_SPEED }));
    },
    get pages() {
      return members.length;
    },
    async finish(): Promise<PackedRaw> {
      return { gzip: Buffer.concat(await Promise.all(members)), sha256: hash.digest('hex'), bytes };
    },
  };
};

/** the text of packed raw HTML (tests, tools) */
export const unpackRaw = (raw: PackedRaw): string => gunzipSync(raw.gzip).toString('utf8');
