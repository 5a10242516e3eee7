import { createHash, randomBytes } from 'node:crypto';
import { type FileHandle, mkdir, open, readdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { RawHtmlRef } from '../../../contracts/events.js';
import { releaseBuffers } from '../../buffers.js';
import type { BlobStore, BlobWriter } from '../../ports/blobStore.js';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../../privateFiles.js';
import { gunzipOffLoop, gzipOffLoop } from '../../zlib.js';

/** Thrown for a key that could escape the store's folder or is otherwise unusable as a relative file name. */
export class BlobKeyError extends Error {
  readonly code = 'SERP_BLOB_BAD_KEY';
  constructor(key: string, why: string) {
    super(`blob key ${JSON.stringify(key)} refused: ${why}`);
    this.name = 'BlobKeyError';
  }
}

const SAFE_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

/** Keys are relative names like `raw/2026/abc.html`: no absolute paths, no `..`, no empty or hidden segments. */
export const checkBlobKey = (key: string): string[] => {
  if (key.length === 0 || key.length > 512) throw new BlobKeyError(key, 'length must be 1..512');
  const segments = key.split('/');
  for (const s of segments) {
    if (s === '..' || s === '.') throw new BlobKeyError(key, 'no "." or ".." segments');
    if (!SAFE_SEGMENT.test(s))
      throw new BlobKeyError(key, 'segments are letters, digits, "._-" and start with one of "A-Za-z0-9_"');
  }
  return segments;
};

/** a prefix of keys names a folder: `render/abc/` (its key without the slash must itself be a valid key) */
export const folderKey = (prefix: string): string => {
  if (!prefix.endsWith('/')) throw new BlobKeyError(prefix, 'a prefix ends with "/"');
  const key = prefix.slice(0, -1);
  checkBlobKey(key);
  return key;
};

const TMP_SUFFIX = '.tmp-';
/**
 * Where blobs written part by part grow until committed: a hidden folder (no key can name it) in the store, on the same
 * file system, so a commit is a rename. A part-written file whose writer died with its process (kill -9 mid-crawl; the
 * job is crawled again) is removed when a store opens on the folder and finds it older than PARTIAL_MAX_AGE_MS, which
 * no live crawl reaches (a page's attempts are bounded), so a store opened beside a running service leaves its files.
 */
const PARTIAL_DIR = '.partial';
export const PARTIAL_MAX_AGE_MS = 60 * 60 * 1000;
/** a gzip member starts with 1f 8b; HTML (or any text) never does, so older uncompressed blobs still read */
const isGzip = (b: Buffer) => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;

/**
 * Raw HTML on the local disk (embedded mode). A put writes a temporary file, fsyncs it and renames it into place, then
 * fsyncs the folder: a reader sees the old blob or the whole new one, and a crash never leaves a torn file under the key.
 * Blobs are stored gzipped (level 1, on libuv's thread pool): a 10-page search is ~7 MB of HTML and ~2.2 MB on disk.
 * The reference's sha256 and bytes describe the content, not the file; `get` returns the content.
 */
export type FsBlobStore = BlobStore & {
  /** settles once the part-written files left by dead writers are removed (the store is usable before) */
  sweptPartials: Promise<unknown>;
};

export const createFsBlobStore = (dir: string): FsBlobStore => {
  const root = resolve(dir);
  const pathOf = (key: string): string => {
    const full = join(root, ...checkBlobKey(key));
    if (!full.startsWith(root + sep)) throw new BlobKeyError(key, 'outside the store');
    return full;
  };

  const fsyncDir = async (path: string) => {
    const handle = await open(path, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  };

  const partialDir = join(root, PARTIAL_DIR);
  const sweepPartials = async () => {
    const names = await readdir(partialDir).catch(() => [] as string[]);
    const before = Date.now() - PARTIAL_MAX_AGE_MS;
    for (const name of names) {
      const path = join(partialDir, name);
      const info = await stat(path).catch(() => undefined);
      if (info && info.mtimeMs < before) await unlink(path).catch(() => undefined);
    }
  };
  const swept = sweepPartials().catch(() => undefined);

  /**
   * Parts go to a file in PARTIAL_DIR as they come (opened at the first), one write after another on libuv's pool;
   * each part's memory is released once written, so a crawl in flight holds none of its pages (before, a job held
   * its gzipped pages until its end: ~20 MB at concurrency 32). `commit` fsyncs the file, renames it to the key and
   * fsyncs the folder, as `putGzipped` does.
   */
  const openGzipped = (key: string): BlobWriter => {
    const target = pathOf(key);
    const partial = join(partialDir, randomBytes(8).toString('hex'));
    let handle: FileHandle | undefined;
    let failed: unknown;
    let closed = false;
    let writes: Promise<void> = Promise.resolve();
    const opened = async () => {
      if (!handle) {
        await mkdir(partialDir, { recursive: true, mode: PRIVATE_DIR_MODE });
        handle = await open(partial, 'wx', PRIVATE_FILE_MODE);
      }
      return handle;
    };
    const discard = async () => {
      await handle?.close().catch(() => undefined);
      handle = undefined;
      await unlink(partial).catch(() => undefined);
    };
    return {
      append(part) {
        if (closed) return releaseBuffers(part);
        writes = writes.then(async () => {
          try {
            if (failed === undefined) await (await opened()).writeFile(part);
          } catch (err) {
            failed = err;
          } finally {
            releaseBuffers(part);
          }
        });
      },
      async commit(content) {
        if (closed) throw new Error(`blob writer for ${key} already closed`);
        closed = true;
        await writes;
        try {
          if (failed !== undefined) throw failed;
          const file = await opened();
          await file.sync();
          await file.close();
          handle = undefined;
          await mkdir(dirname(target), { recursive: true, mode: PRIVATE_DIR_MODE });
          await rename(partial, target);
        } catch (err) {
          await discard();
          throw err;
        }
        await fsyncDir(dirname(target));
        return { key, sha256: content.sha256, bytes: content.bytes };
      },
      async abort() {
        closed = true;
        await writes;
        await discard();
      },
    };
  };

  const store: FsBlobStore = {
    sweptPartials: swept,
    openGzipped,
    async put(key, body): Promise<RawHtmlRef> {
      pathOf(key);
      const buf = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
      const sha256 = createHash('sha256').update(buf).digest('hex');
      const stored = await gzipOffLoop(buf);
      const ref = await store.putGzipped(key, stored, { sha256, bytes: buf.length });
      // the text's bytes, made here, are on disk now and read by nobody: their memory goes back at once (a caller's
      // Buffer stays the caller's; zlib's output is a view into zlib's own buffer and is left to the collector)
      if (typeof body === 'string') releaseBuffers(buf);
      return ref;
    },

    async putGzipped(key, stored, content): Promise<RawHtmlRef> {
      const target = pathOf(key);
      await mkdir(dirname(target), { recursive: true, mode: PRIVATE_DIR_MODE });
      const tmp = `${target}${TMP_SUFFIX}${randomBytes(6).toString('hex')}`;
      const handle = await open(tmp, 'wx', PRIVATE_FILE_MODE);
      try {
        await handle.writeFile(stored);
        await handle.sync();
      } catch (err) {
        await handle.close();
        await unlink(tmp).catch(() => undefined);
        throw err;
      }
      await handle.close();
      try {
        await rename(tmp, target);
      } catch (err) {
        await unlink(tmp).catch(() => undefined);
        throw err;
      }
      await fsyncDir(dirname(target));
      return { key, sha256: content.sha256, bytes: content.bytes };
    },

    async get(key) {
      const stored = await store.getStored(key);
      return stored && isGzip(stored) ? await gunzipOffLoop(stored) : stored;
    },

    async getStored(key) {
      try {
        return await readFile(pathOf(key));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
    },

    async delete(key) {
      await rm(pathOf(key), { force: true });
    },
    async deleteUnder(prefix) {
      const folder = pathOf(folderKey(prefix));
      const names = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
      await rm(folder, { recursive: true, force: true });
      return names.filter((d) => d.isFile()).length;
    },
  };
  return store;
};
