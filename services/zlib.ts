import { promisify } from 'node:util';
import { brotliCompress, constants, gunzip, gzip } from 'node:zlib';

/**
 * zlib on libuv's thread pool with output chunks sized to the data. Node's default 16 KiB chunk makes the event loop
 * take a callback, a buffer and a push per 16 KiB of output: gunzipping a 400 kB result cost the loop 1.8 ms that
 * way and 0.14 ms with one large chunk (event-loop active time, measured with performance.eventLoopUtilization).
 */
const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);
const brotliAsync = promisify(brotliCompress);

/** compressed text is rarely larger than its input: one chunk holds it */
const chunkFor = (bytes: number) => Math.min(Math.max(bytes, 64 * 1024), 8 * 1024 * 1024);

export const gzipOffLoop = (data: Buffer | string, level: number = constants.Z_BEST_SPEED): Promise<Buffer> =>
  // memLevel 9: zlib's largest hash memory, ~20% faster than the default 8 on HTML and JSON (see rawPacker.ts)
  gzipAsync(data, { level, memLevel: 9, chunkSize: chunkFor(Buffer.byteLength(data)) });

/** HTML and JSON inflate 4–10×: 1 MiB chunks, a handful of callbacks for a 10-page search's raw HTML */
export const gunzipOffLoop = (data: Uint8Array): Promise<Buffer> => gunzipAsync(data, { chunkSize: 1024 * 1024 });

export const brotliOffLoop = (data: Buffer | string, quality: number): Promise<Buffer> =>
  brotliAsync(data, {
    chunkSize: chunkFor(Buffer.byteLength(data)),
    params: { [constants.BROTLI_PARAM_QUALITY]: quality },
  });
