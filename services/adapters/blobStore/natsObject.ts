import { createHash } from 'node:crypto';
import { jetstream } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import type { RawHtmlRef } from '../../../contracts/events.js';
import { releaseBuffers } from '../../buffers.js';
import type { BlobStore, BlobWriter } from '../../ports/blobStore.js';
import { StoreUnavailableError } from '../../ports/unavailable.js';
import { gunzipOffLoop, gzipOffLoop } from '../../zlib.js';
import { checkBlobKey } from './fs.js';

const isGzip = (b: Uint8Array) => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;

/**
 * Raw HTML in a NATS Object Store bucket (docs/distributed.md#the-other-nats-adapters), so every crawler writes and
 * every api reads the same pages. Same keys, same gzip (level 1) and the same reference (sha256 and bytes of the
 * content) as the files of embedded mode; an object's chunks are acknowledged by JetStream before `put` resolves.
 */
export const createNatsObjectBlobStore = async (options: {
  nc: NatsConnection;
  /** bucket (default serp_raw) */
  bucket?: string;
  replicas?: number;
  ownsConnection?: boolean;
}): Promise<BlobStore> => {
  const os = await new Objm(jetstream(options.nc, { timeout: 15_000 })).create(options.bucket ?? 'serp_raw', {
    replicas: options.replicas ?? 1,
    storage: 'file' as never,
  });
  const store = {
    async put(key: string, body: string | Buffer): Promise<RawHtmlRef> {
      checkBlobKey(key);
      const buf = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
      const sha256 = createHash('sha256').update(buf).digest('hex');
      const stored = await gzipOffLoop(buf);
      return store.putGzipped(key, stored, { sha256, bytes: buf.length });
    },
    async putGzipped(key: string, stored: Buffer, content: { sha256: string; bytes: number }): Promise<RawHtmlRef> {
      checkBlobKey(key);
      await os.putBlob({ name: key }, stored).catch((err: unknown) => {
        throw new StoreUnavailableError('raw HTML store (NATS Object Store)', err);
      });
      return { key, sha256: content.sha256, bytes: content.bytes };
    },
    /**
     * An object is written whole: the parts wait in memory until `commit` puts them (a distributed crawler holds a
     * job's gzipped pages until its end, as every crawler did before the embedded store wrote them as they came).
     */
    openGzipped(key: string): BlobWriter {
      checkBlobKey(key);
      let parts: Uint8Array[] | undefined = [];
      return {
        append(part) {
          parts?.push(part);
        },
        async commit(content) {
          if (!parts) throw new Error(`blob writer for ${key} already closed`);
          const whole = Buffer.concat(parts);
          releaseBuffers(...parts);
          parts = undefined;
          return store.putGzipped(key, whole, content);
        },
        async abort() {
          if (parts) releaseBuffers(...parts);
          parts = undefined;
        },
      };
    },
    async get(key) {
      checkBlobKey(key);
      const stored = await os.getBlob(key).catch((err: unknown) => {
        throw new StoreUnavailableError('raw HTML store (NATS Object Store)', err);
      });
      if (!stored) return undefined;
      return isGzip(stored) ? await gunzipOffLoop(stored) : Buffer.from(stored);
    },
    async delete(key) {
      checkBlobKey(key);
      try {
        await os.delete(key);
      } catch (err) {
        if (!/not found/i.test(String((err as Error).message))) throw err;
      }
    },
    async close() {
      if (options.ownsConnection && !options.nc.isClosed()) await options.nc.drain();
    },
  } as BlobStore & { close(): Promise<void> };
  return store;
};
