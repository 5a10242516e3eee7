import { createHash, randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Test } from 'tap';
import type { BlobStore } from '../../services/ports/blobStore.js';

export interface BlobStoreFixture {
  store: BlobStore;
  cleanup(): Promise<void>;
}

/** What every BlobStore adapter must do (services/ports/blobStore.ts): the files of embedded mode, the NATS Object Store. */
export const blobStoreConformance = async (t: Test, make: () => Promise<BlobStoreFixture>) => {
  const { store, cleanup } = await make();
  t.teardown(cleanup);
  const key = (name: string) => `raw/${randomBytes(6).toString('hex')}/${name}.html`;

  await t.test('BlobStore › gives back the same bytes with the content’s sha256 and size', async (t) => {
    const html = `<html><body>${'café ☕ '.repeat(5000)}</body></html>`;
    const k = key('page');
    const ref = await store.put(k, html);
    t.same(ref, {
      key: k,
      sha256: createHash('sha256').update(html).digest('hex'),
      bytes: Buffer.byteLength(html),
    });
    t.equal((await store.get(k))?.toString('utf8'), html);
    const bin = randomBytes(3 * 1024 * 1024);
    const kb = key('binary');
    t.equal((await store.put(kb, bin)).bytes, bin.length, 'a 3 MB buffer');
    t.ok((await store.get(kb))?.equals(bin), 'comes back byte for byte');
  });

  await t.test('BlobStore › content already gzipped, in several members, reads back as the content', async (t) => {
    const parts = ['<!-- serp-page start=0 -->\n<html>one</html>', '\n<!-- serp-page start=10 -->\n<html>twö</html>'];
    const content = parts.join('');
    const k = key('packed');
    const described = { sha256: createHash('sha256').update(content).digest('hex'), bytes: Buffer.byteLength(content) };
    const ref = await store.putGzipped(k, Buffer.concat(parts.map((p) => gzipSync(p))), described);
    t.same(ref, { key: k, ...described }, 'the reference describes the content, not the stored bytes');
    t.equal((await store.get(k))?.toString('utf8'), content, 'every member, in order');
    const stored = await store.getStored(k);
    t.ok(stored && stored[0] === 0x1f && stored[1] === 0x8b, 'as stored: gzip members, ready to send as they are');
    t.equal(stored && gunzipSync(stored).toString('utf8'), content, 'which inflate to the content');
    t.equal(await store.getStored(key('absent')), undefined, 'an absent blob is undefined as stored too');
  });

  await t.test('BlobStore › a blob written part by part reads back whole, and only once committed', async (t) => {
    const pages = ['<!-- serp-page start=0 -->\n<html>ein</html>', '\n<!-- serp-page start=10 -->\n<html>zwö</html>'];
    const content = pages.join('');
    const described = { sha256: createHash('sha256').update(content).digest('hex'), bytes: Buffer.byteLength(content) };
    const k = key('streamed');
    await store.put(k, 'the blob before');
    const writer = store.openGzipped(k);
    for (const p of pages) writer.append(gzipSync(p));
    t.equal((await store.get(k))?.toString(), 'the blob before', 'before the commit a reader sees the old blob');
    t.same(await writer.commit(described), { key: k, ...described });
    t.equal((await store.get(k))?.toString('utf8'), content, 'every part, in order');
    writer.append(gzipSync('late'));
    t.equal((await store.get(k))?.toString('utf8'), content, 'a part after the commit is dropped');
    await t.rejects(writer.commit(described), 'a writer commits once');
  });

  await t.test('BlobStore › an aborted writer leaves the key as it was', async (t) => {
    const k = key('aborted');
    const fresh = store.openGzipped(k);
    fresh.append(gzipSync('<html>half a crawl</html>'));
    await fresh.abort();
    t.equal(await store.get(k), undefined, 'a new key stays absent');
    await store.put(k, 'kept');
    const over = store.openGzipped(k);
    over.append(gzipSync('<html>never</html>'));
    await over.abort();
    t.equal((await store.get(k))?.toString(), 'kept', 'an existing blob is untouched');
    const nothing = store.openGzipped(key('empty'));
    await t.resolves(nothing.abort(), 'a writer given nothing aborts cleanly');
    t.equal(await store.get(key('empty')), undefined, 'and leaves no blob');
  });

  await t.test('BlobStore › a second put replaces the first whole', async (t) => {
    const k = key('twice');
    await store.put(k, 'first version, the longer one');
    await store.put(k, 'second');
    t.equal((await store.get(k))?.toString(), 'second');
  });

  await t.test('BlobStore › missing blobs read as undefined; delete is idempotent', async (t) => {
    const k = key('gone');
    t.equal(await store.get(k), undefined);
    await store.put(k, 'x');
    await store.delete(k);
    t.equal(await store.get(k), undefined, 'deleted');
    await t.resolves(store.delete(k), 'deleting again is fine');
    t.equal(await store.get(k), undefined);
  });

  await t.test('BlobStore › deleteUnder deletes every blob under a prefix and nothing beside it', async (t) => {
    const folder = `render/${randomBytes(6).toString('hex')}`;
    const beside = `${folder}x/kept.png`;
    await store.put(`${folder}/a.png`, Buffer.from([1, 2, 3]));
    await store.put(`${folder}/b/c.json`, '{}');
    await store.put(beside, 'kept');
    t.equal(await store.deleteUnder(`${folder}/`), 2, 'two blobs deleted');
    t.equal(await store.get(`${folder}/a.png`), undefined, 'the first is gone');
    t.equal(await store.get(`${folder}/b/c.json`), undefined, 'the nested one is gone');
    t.equal((await store.get(beside))?.toString(), 'kept', 'a key that only shares the characters is kept');
    t.equal(await store.deleteUnder(`${folder}/`), 0, 'deleting again deletes nothing');
    await t.rejects(store.deleteUnder(folder), /ends with/, 'a prefix must name a folder');
  });

  await t.test('BlobStore › concurrent puts of different keys all land', async (t) => {
    const keys = Array.from({ length: 20 }, (_, i) => key(`c${i}`));
    await Promise.all(keys.map((k, i) => store.put(k, `page ${i}`)));
    const back = await Promise.all(keys.map((k) => store.get(k)));
    t.same(
      back.map((b) => b?.toString()),
      keys.map((_, i) => `page ${i}`),
    );
  });

  await t.test('BlobStore › refuses keys that could escape or hide', async (t) => {
    for (const bad of ['../etc/passwd', '/abs', 'a/../../b', '', 'a//b', '.hidden/x']) {
      await t.rejects(store.put(bad, 'x'), { code: 'SERP_BLOB_BAD_KEY' }, JSON.stringify(bad));
    }
  });
};
