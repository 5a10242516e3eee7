import { Readable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { releaseBuffers } from '../../buffers.js';

/** What reading a body up to a cap gave: the body, or only that it went past the cap. */
export type BoundedBody =
  | { body: Buffer; wireBytes: number; overLimit?: undefined }
  | { body?: undefined; wireBytes: number; overLimit: true };

/** zstd exists in Node's zlib from 22.15 only; where it does not, a zstd body stays as it came (bounded all the same). */
const zstd = (zlib as unknown as { createZstdDecompress?: () => Transform }).createZstdDecompress;

/**
 * The decoder of a content coding, chosen from the body's first byte where the coding is ambiguous: servers send
 * "deflate" both as zlib (RFC 9110) and raw, and a browser reads both.
 */
const decoderFor = (encoding: string, first: number): Transform | undefined => {
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
    case 'x-deflate':
      return (first & 0x0f) === 8 ? zlib.createInflate() : zlib.createInflateRaw();
    case 'br':
      return zlib.createBrotliDecompress();
    case 'zstd':
      return zstd?.();
    default:
      return undefined;
  }
};

/** The body's first byte without consuming it, or undefined for an empty body (which has nothing to decode). */
const peekFirstByte = async (source: Readable): Promise<number | undefined> => {
  for (;;) {
    const chunk: Buffer | null = source.read();
    if (chunk !== null) {
      source.unshift(chunk);
      return chunk[0];
    }
    if (source.readableEnded || source.destroyed) return undefined;
    await readableOrEnd(source);
  }
};

/** The next 'readable' or 'end' (a read that found the end schedules 'end', not another 'readable'); an error rejects. */
const readableOrEnd = (source: Readable) =>
  new Promise<void>((resolve, reject) => {
    const settle = (err?: Error) => {
      source.off('readable', onReady);
      source.off('end', onReady);
      source.off('close', onReady);
      source.off('error', settle);
      if (err) reject(err);
      else resolve();
    };
    const onReady = () => settle();
    source.once('readable', onReady);
    source.once('end', onReady);
    source.once('close', onReady);
    source.once('error', settle);
  });

/**
 * How far the inflated bytes held may outgrow the compressed ones before the body counts as a bomb until it proves
 * otherwise: HTML compresses 4–10× (a result page of 3 MB is 300–700 kB of gzip), a zeros bomb 1,000× and more. Past
 * the ratio (and the first megabyte, held freely) the inflated bytes are dropped as they come and only counted; a body
 * that still ends within the cap is inflated again from its compressed bytes, which are small by then.
 */
const HELD_RATIO = 32;
const HELD_FREELY = 2 ** 20;

/**
 * Inflated chunks nobody reads again, given back as they pass (releaseBuffers), a megabyte at a time: left to the
 * collector, a bomb's garbage reached tens of megabytes before V8 counted it as pressure.
 */
const dropper = () => {
  let dropped: Buffer[] = [];
  let bytes = 0;
  const flush = () => {
    releaseBuffers(...dropped);
    dropped = [];
    bytes = 0;
  };
  return {
    drop(chunk: Buffer) {
      dropped.push(chunk);
      bytes += chunk.length;
      if (bytes >= HELD_FREELY) flush();
    },
    flush,
  };
};

/**
 * Reads a response body, decoding its content coding, and stops at `maxBytes` on either side of the decoder: the bytes
 * as they come over the wire and the bytes they inflate to (docs/security.md#bodies-are-bounded-while-they-stream).
 * Past either, every stream of the pipeline is destroyed at once (the source's connection with it), what was read is
 * dropped, and the answer says `overLimit`. A body that inflates far past its compressed size is counted, not held
 * (HELD_RATIO): four 200 kB gzip bombs that inflate to 256 MB each cost a few megabytes together, not their cap each.
 * A body that breaks off (a reset, a truncated gzip stream) rejects.
 */
export const readBounded = async (
  source: Readable,
  encoding: string | undefined,
  maxBytes: number,
): Promise<BoundedBody> => {
  const coding = (encoding ?? '').trim().toLowerCase();
  const first = coding && coding !== 'identity' ? await peekFirstByte(source) : undefined;
  const decoder = first === undefined ? undefined : decoderFor(coding, first);
  let wireBytes = 0;
  let size = 0;
  // what came over the wire, kept only where it is decoded (else it is the body itself)
  let wire: Buffer[] = [];
  // the decoded body, until it outgrows HELD_RATIO
  let held: Buffer[] | undefined = [];
  // set before the pipeline is stopped: the error it rejects with may be another stage's (the source's abort) that
  // got there first
  let over = false;
  const stop = () => {
    over = true;
    return new Error('body over its cap');
  };
  const countWire = async function* (input: AsyncIterable<Buffer>) {
    for await (const chunk of input) {
      wireBytes += chunk.length;
      if (wireBytes > maxBytes) throw stop();
      if (decoder) wire.push(chunk);
      yield chunk;
    }
  };
  const { drop, flush } = dropper();
  const collect = async (input: AsyncIterable<Buffer>) => {
    for await (const chunk of input) {
      size += chunk.length;
      if (held && decoder && size > HELD_FREELY && size > wireBytes * HELD_RATIO) {
        held.forEach(drop);
        held = undefined;
      }
      if (size > maxBytes) throw stop();
      if (held) held.push(chunk);
      else drop(chunk);
    }
  };
  try {
    await (decoder ? pipeline(source, countWire, decoder, collect) : pipeline(source, countWire, collect));
  } catch (err) {
    if (over) return { overLimit: true, wireBytes };
    throw err;
  } finally {
    flush();
    if (over) {
      wire = [];
      held = undefined;
    }
  }
  // one buffer of the body's own size: a page of any size moves to a parse thread without a copy (services/buffers.ts)
  if (held) return { body: Buffer.concat(held, size), wireBytes };
  return { body: await decodeAgain(wire, coding, first ?? 0, size), wireBytes };
};

/** A body already known to inflate to `size` bytes, inflated again into one buffer of that size. */
const decodeAgain = async (wire: Buffer[], coding: string, first: number, size: number): Promise<Buffer> => {
  const body = Buffer.allocUnsafe(size);
  const { drop, flush } = dropper();
  let at = 0;
  await pipeline(Readable.from(wire), decoderFor(coding, first) as Transform, async (input: AsyncIterable<Buffer>) => {
    for await (const chunk of input) {
      if (at + chunk.length > size) throw new Error('the body inflated differently the second time');
      body.set(chunk, at);
      at += chunk.length;
      drop(chunk);
    }
  });
  flush();
  return body;
};
