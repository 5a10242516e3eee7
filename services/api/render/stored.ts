import type { FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import {
  type AnswerEncoding,
  BROTLI_QUALITY,
  COMPRESS_MIN_BYTES,
  encodingFor,
  etagOf,
  GZIP_LEVEL,
} from '../../answers/encoding.js';
import { brotliOffLoop, gzipOffLoop } from '../../zlib.js';
import type { ServerTiming } from '../serverTiming.js';

/**
 * Finished results as stored bytes (docs/decisions.md#raw-html-and-finished-answers): a terminal job's answer changes
 * only when its result is re-parsed, so the serialised JSON, its ETag and its compressed forms are made once and sent
 * as they are. The key carries the version of the result (the source job's `updatedAt`, which every CrawlCompleted and
 * SearchReparsed moves), so a re-parse is never served stale. Bounded by bytes; a miss renders again, nothing else.
 */
export interface StoredAnswer {
  /**
   * the JSON as UTF-8 bytes: a string is encoded again on every write to a socket (for a 400 kB result that was ~9% of
   * the event loop's time under polls), a Buffer is handed to the socket as it is
   */
  body: Buffer;
  etag: string;
  gzip?: Buffer;
  br?: Buffer;
  /** a compression under way, shared by the requests that arrive meanwhile */
  compressing?: Partial<Record<'br' | 'gzip', Promise<Buffer>>>;
}

/**
 * The key of a job's stored answer in one form (`form`: the output and its slice): it carries the result's version
 * (the source job's `updatedAt`), and, for an answer with signed links (compat's raw-HTML link, renewed every minute),
 * the minute, so that neither a re-parse nor an expired link is ever served from store.
 */
export const answerKey = (
  jobId: string,
  form: string,
  source: { updatedAt: string } | undefined,
  signedLinks: boolean,
): string => `${jobId}|${form}|${source?.updatedAt ?? ''}|${signedLinks ? Math.floor(Date.now() / 60_000) : ''}`;

const sizeOf = (a: StoredAnswer) => a.body.length + (a.gzip?.length ?? 0) + (a.br?.length ?? 0);

export const createStoredAnswers = (maxBytes = 64 * 1024 * 1024) => {
  const lru = new LRUCache<string, StoredAnswer>({ maxSize: maxBytes, sizeCalculation: (a) => Math.max(1, sizeOf(a)) });

  /**
   * The answer's bytes in `encoding`, made once. Compressed on libuv's thread pool, not the event loop: a 400 kB
   * result takes brotli ~15 ms, which every request behind it would otherwise wait out (a newly finished result's
   * first fetch arrived mostly while crawls were running).
   */
  const compressed = async (key: string, a: StoredAnswer, encoding: 'br' | 'gzip'): Promise<Buffer> => {
    const done = a[encoding];
    if (done) return done;
    a.compressing ??= {};
    let pending = a.compressing[encoding];
    if (!pending) {
      pending = encoding === 'br' ? brotliOffLoop(a.body, BROTLI_QUALITY) : gzipOffLoop(a.body, GZIP_LEVEL);
      a.compressing[encoding] = pending;
      pending.then(
        (bytes) => {
          a[encoding] = bytes;
          delete a.compressing?.[encoding];
          // re-weigh it with its new form: lru-cache skips the size recount when the same object is set again, so
          // it is taken out and put back (its recency is refreshed too, which a fetch just earned)
          if (lru.peek(key) === a) {
            lru.delete(key);
            lru.set(key, a);
          }
        },
        () => delete a.compressing?.[encoding],
      );
    }
    return pending;
  };

  return {
    get: (key: string): StoredAnswer | undefined => lru.get(key),
    /**
     * keeps `json` (text, or its UTF-8 bytes) as the answer for `key`, with its ETag (`etagOf`, when not given) and any
     * compressed form already made
     */
    put(
      key: string,
      json: string | Buffer,
      etag?: string,
      compressed?: { encoding: AnswerEncoding; bytes: Buffer },
    ): StoredAnswer {
      const body = typeof json === 'string' ? Buffer.from(json, 'utf8') : json;
      const a: StoredAnswer = { body, etag: etag ?? etagOf(body) };
      if (compressed) a[compressed.encoding] = compressed.bytes;
      lru.set(key, a);
      return a;
    },
    /**
     * sends `a`: 304 when the client has it, else its bytes in the best encoding the client accepts; with `timing`,
     * its Server-Timing header too (a compression made for this request counted in it)
     */
    async send(req: FastifyRequest, reply: FastifyReply, key: string, a: StoredAnswer, timing?: ServerTiming) {
      reply.header('etag', a.etag).header('vary', 'Accept-Encoding').header('cache-control', 'private, no-cache');
      const match = req.headers['if-none-match'];
      if (match && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === a.etag)) {
        if (timing) reply.header('server-timing', timing.header());
        return reply.code(304).send();
      }
      reply.code(200).type('application/json');
      const encoding = a.body.length >= COMPRESS_MIN_BYTES ? encodingFor(req.headers['accept-encoding']) : undefined;
      let bytes: Buffer | undefined;
      if (encoding) {
        const make = () => compressed(key, a, encoding);
        bytes = a[encoding] ?? (await (timing ? timing.time('compress', make) : make()));
      }
      if (timing) reply.header('server-timing', timing.header());
      if (!encoding || !bytes) return reply.send(a.body);
      return reply.header('content-encoding', encoding).send(bytes);
    },
    /** the bytes held now (bodies and their compressed forms) */
    get size() {
      return lru.calculatedSize;
    },
    /** the bound on them */
    maxBytes,
  };
};
export type StoredAnswers = ReturnType<typeof createStoredAnswers>;
