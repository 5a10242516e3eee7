import { constants, gunzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { BlobStore } from '../../ports/blobStore.js';
import { gunzipOffLoop } from '../../zlib.js';

const isGzip = (b: Buffer) => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;

/** whether the client takes gzip (listed, or `*`, and not at q=0) */
const acceptsGzip = (header: string | undefined): boolean =>
  (header ?? '')
    .toLowerCase()
    .split(',')
    .map((part) => part.trim().split(';'))
    .some(([name, q]) => (name?.trim() === 'gzip' || name?.trim() === '*') && !(q && /^q=0(\.0*)?$/.test(q.trim())));

/** A page marker's URL with an origin: raw HTML stored before markers named the path only. */
const ORIGIN_IN_MARKERS = /(<!-- serp-page start=\d+ url=)[a-z][a-z0-9+.-]*:\/\/[^/\s]*/g;
const ORIGIN_IN_MARKER = new RegExp(ORIGIN_IN_MARKERS.source);

/** The first marker of stored gzip members, read from their first kilobytes (a partial inflate, no error at the cut). */
const firstBytes = (gzipped: Buffer): string =>
  gunzipSync(gzipped.subarray(0, 4096), { finishFlush: constants.Z_SYNC_FLUSH }).subarray(0, 1024).toString('utf8');

/**
 * A job's raw HTML as an answer (`/raw/{job_id}`, compat `/searches/{id}.html`): Google's pages on the API's own
 * origin, sandboxed (no script, no same-origin access), never sniffed, and private to whoever holds the link. The
 * stored gzip members go out as they are (`Content-Encoding: gzip`) to a client that takes gzip, so an answer costs
 * no inflating; markers name each page by path only. Raw HTML stored before that (markers with the origin the crawler
 * used, which is the operator's to know) is inflated and rewritten, and sent uncompressed. Undefined when the blob
 * is gone.
 */
export const sendRawHtml = async (
  req: FastifyRequest,
  reply: FastifyReply,
  blobStore: BlobStore,
  key: string,
): Promise<FastifyReply | undefined> => {
  const stored = await blobStore.getStored(key);
  if (!stored) return undefined;
  reply
    .code(200)
    .type('text/html; charset=utf-8')
    .header('content-security-policy', 'sandbox')
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'private')
    .header('vary', 'accept-encoding');
  const gzipped = isGzip(stored);
  if (gzipped && acceptsGzip(req.headers['accept-encoding']) && !ORIGIN_IN_MARKER.test(firstBytes(stored))) {
    return reply.header('content-encoding', 'gzip').send(stored);
  }
  const text = (gzipped ? await gunzipOffLoop(stored) : stored).toString('utf8');
  return reply.send(text.replace(ORIGIN_IN_MARKERS, '$1'));
};
