import { createHash } from 'node:crypto';
import { brotliCompressSync, gzipSync, constants as zlibConstants } from 'node:zlib';

/**
 * A finished answer's bytes as they are sent (docs/decisions.md#raw-html-and-finished-answers): its ETag and its
 * compressed forms, the same whether the HTTP thread makes them (services/api/render/stored.ts) or the pipeline thread
 * does for a result's first answer (services/runtime/pipelineWorker.ts). No HTTP here (docs/architecture.md#folders).
 */

/** a stored answer's ETag: its bytes' SHA-1 */
export const etagOf = (body: Buffer) => `"${createHash('sha1').update(body).digest('base64url')}"`;

export type AnswerEncoding = 'br' | 'gzip';

/** answers below this size go as they are: compressing them would save less than the header costs */
export const COMPRESS_MIN_BYTES = 1024;

/** brotli quality 5: most of brotli's gain at a small part of its default (11) cost; gzip level 6 */
export const BROTLI_QUALITY = 5;
export const GZIP_LEVEL = 6;

/**
 * `body` compressed as an answer is, on the calling thread: for a thread that is not the event loop (the pipeline
 * thread renders a finished result's first answer and compresses it there, at its lower priority)
 */
export const compressAnswerSync = (body: Buffer, encoding: AnswerEncoding): Buffer =>
  encoding === 'br'
    ? brotliCompressSync(body, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } })
    : gzipSync(body, { level: GZIP_LEVEL, memLevel: 9 });

/** the encoding to send: br, then gzip, when the client lists it (q=0 refuses) */
export const encodingFor = (header: string | undefined): AnswerEncoding | undefined => {
  if (!header) return undefined;
  const accepted = new Set(
    header
      .toLowerCase()
      .split(',')
      .map((part) => part.trim().split(';'))
      .filter(([, q]) => !q || !/^q=0(\.0*)?$/.test(q.trim()))
      .map(([name]) => name.trim()),
  );
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip') || accepted.has('*')) return 'gzip';
  return undefined;
};
