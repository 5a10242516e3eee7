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

/**
 * The output in memory of its own size. A stream's output chunk is allocated at `chunkSize` and what it emits is a
 * view into it, so an output that fits one chunk kept the whole chunk alive: a 400 kB answer's brotli form of ~8 kB
 * held a 400 kB buffer, which the stored answers' byte bound counted as 8 kB (docs/operations.md#memory). Copying the
 * few bytes lets the chunk go at once.
 */
const ownSized = (out: Buffer): Buffer => (out.byteLength < out.buffer.byteLength ? Buffer.from(out) : out);

export const gzipOffLoop = async (data: Buffer | string, level: number = constants.Z_BEST_SPEED): Promise<Buffer> =>
  // memLevel 9: zlib's largest hash memory, ~20% faster than the default 8 on HTML and JSON (see rawPacker.ts)
  ownSized(await gzipAsync(data, { level, memLevel: 9, chunkSize: chunkFor(Buffer.byteLength(data)) }));

/** HTML and JSON inflate 4–10×: 1 MiB chunks, a handful of callbacks for a 10-page search's raw HTML */
export const gunzipOffLoop = async (data: Uint8Array): Promise<Buffer> =>
  ownSized(await gunzipAsync(data, { chunkSize: 1024 * 1024 }));

export const brotliOffLoop = async (data: Buffer | string, quality: number): Promise<Buffer> =>
  ownSized(
    await brotliAsync(data, {
      chunkSize: chunkFor(Buffer.byteLength(data)),
      params: { [constants.BROTLI_PARAM_QUALITY]: quality },
    }),
  );
