import { createHash } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import type { RawHtmlRef } from '../../../contracts/events.js';
import { releaseBuffers } from '../../buffers.js';
import type { BlobStore, BlobWriter } from '../../ports/blobStore.js';
import { StoreUnavailableError } from '../../ports/unavailable.js';
import { gunzipOffLoop, gzipOffLoop } from '../../zlib.js';
import { checkBlobKey, folderKey } from './fs.js';

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
  /**
   * how long the requests that create the bucket and find its stream's leader wait (default 15 s); the caller tries
   * again when one gets no answer (docs/distributed.md#a-cluster-on-one-machine)
   */
  setupTimeoutMs?: number;
}): Promise<BlobStore> => {
  const bucket = options.bucket ?? 'serp_raw';
  const config = { replicas: options.replicas ?? 1, storage: 'file' as never };
  const streamName = `OBJ_${bucket}`;
  if (options.setupTimeoutMs !== undefined) {
    // a stream another process has just created answers nothing until its leader is elected: asked with a short
    // wait (and again), the store below then finds it answering
    const timeout = options.setupTimeoutMs;
    await new Objm(jetstream(options.nc, { timeout })).create(bucket, config);
    await (await jetstreamManager(options.nc, { timeout, checkAPI: false })).streams.info(streamName);
  }
  const os = await new Objm(jetstream(options.nc, { timeout: 15_000 })).create(bucket, config);
  const jsm = await jetstreamManager(options.nc, { timeout: 15_000 });
  /**
   * An object's chunks by batched direct get, without a consumer. The library's `getBlob` makes an ordered consumer
   * for every read and leaves it to the server's 5-minute inactivity sweep: a burst of reads (a replay rebuilding
   * thousands of bodies from their results) filled the stream's consumers, and every read after failed with
   * "maximum consumers limit reached" until the sweep. The description comes from the stream leader; a replica that
   * does not hold every chunk yet is asked again (docs/distributed.md#the-other-nats-adapters).
   */
  const readObject = async (key: string): Promise<Buffer | undefined> => {
    const info = await os.info(key);
    if (!info || info.deleted) return undefined;
    if (info.size === 0 || info.chunks === 0) return Buffer.alloc(0);
    const subject = `$O.${bucket}.C.${info.nuid}`;
    const parts: Uint8Array[] = [];
    let seq = 1;
    for (let tries = 0; parts.length < info.chunks; ) {
      let got = 0;
      try {
        const iter = await jsm.direct.getBatch(streamName, {
          seq,
          next_by_subj: subject,
          batch: Math.min(info.chunks - parts.length, 256),
        });
        for await (const m of iter) {
          parts.push(m.data);
          got++;
          seq = m.seq + 1;
        }
      } catch (err) {
        if (!/message not found|no message found|10037|\b404\b/i.test(String((err as Error)?.message ?? err)))
          throw err;
      }
      if (got === 0) {
        if (tries++ > 50) throw new Error(`object ${key}: ${parts.length} of its ${info.chunks} chunks found`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    const whole = Buffer.concat(parts);
    const digest = createHash('sha256').update(whole).digest();
    if (!digest.equals(Buffer.from(info.digest.replace(/^SHA-256=/, ''), 'base64'))) {
      throw new Error(`object ${key}: its chunks do not match its digest`);
    }
    return whole;
  };
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
      const stored = await store.getStored(key);
      return stored && isGzip(stored) ? await gunzipOffLoop(stored) : stored;
    },
    async getStored(key) {
      checkBlobKey(key);
      return readObject(key).catch((err: unknown) => {
        throw new StoreUnavailableError('raw HTML store (NATS Object Store)', err);
      });
    },
    async delete(key) {
      checkBlobKey(key);
      try {
        await os.delete(key);
      } catch (err) {
        if (!/not found/i.test(String((err as Error).message))) throw err;
      }
    },
    /** Object names have no folders in NATS: the bucket's list is read and the names under `prefix` deleted. */
    async deleteUnder(prefix) {
      folderKey(prefix);
      const names = (await os.list()).filter((o) => !o.deleted && o.name.startsWith(prefix)).map((o) => o.name);
      for (const name of names) await store.delete(name);
      return names.length;
    },
    async close() {
      if (options.ownsConnection && !options.nc.isClosed()) await options.nc.drain();
    },
  } as BlobStore & { close(): Promise<void> };
  return store;
};
