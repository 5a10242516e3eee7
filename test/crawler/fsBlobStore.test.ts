import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BlobKeyError, createFsBlobStore } from '../../services/adapters/blobStore/fs.js';

t.test('FsBlobStore', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'serp-blobs-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = createFsBlobStore(dir);

  t.test('returns the key, SHA-256 and size of what it stored, and gives the same bytes back', async (t) => {
    const body = '<!-- serp-page start=0 -->\n<html>é</html>';
    const ref = await store.put('raw/2026/abc.html', body);
    t.same(ref, {
      key: 'raw/2026/abc.html',
      sha256: createHash('sha256').update(body, 'utf8').digest('hex'),
      bytes: Buffer.byteLength(body),
    });
    t.equal((await store.get('raw/2026/abc.html'))?.toString('utf8'), body);
  });

  t.test('overwrites whole and leaves no temporary file behind', async (t) => {
    await store.put('raw/x.html', 'first');
    await store.put('raw/x.html', Buffer.from('second'));
    t.equal((await store.get('raw/x.html'))?.toString(), 'second');
    t.same((await readdir(join(dir, 'raw'))).sort(), ['2026', 'x.html']);
  });

  t.test('answers undefined for a missing blob and deletes idempotently', async (t) => {
    t.equal(await store.get('raw/none.html'), undefined);
    await store.put('raw/gone.html', 'x');
    await store.delete('raw/gone.html');
    await store.delete('raw/gone.html');
    t.equal(await store.get('raw/gone.html'), undefined);
  });

  t.test('refuses keys that could leave its folder', async (t) => {
    for (const key of ['../escape', 'a/../../b', '/etc/passwd', 'a//b', '.hidden', 'a/./b', '', 'a\\b']) {
      await t.rejects(store.put(key, 'x'), BlobKeyError, key);
      await t.rejects(store.get(key), BlobKeyError, key);
    }
  });
});
