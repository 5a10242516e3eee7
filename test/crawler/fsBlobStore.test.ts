import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
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

  t.test('keeps a page gzipped on disk and reads blobs written before compression', async (t) => {
    const page = `<html><body>${'<div class="MjjYud"><a href="https://example.com/">result</a></div>'.repeat(5000)}</body></html>`;
    const ref = await store.put('raw/big.html', page);
    t.equal(ref.bytes, Buffer.byteLength(page), 'the reference describes the content');
    const onDisk = await readFile(join(dir, 'raw', 'big.html'));
    t.same([onDisk[0], onDisk[1]], [0x1f, 0x8b], 'the file is a gzip member');
    t.ok((await stat(join(dir, 'raw', 'big.html'))).size < page.length / 10, 'and much smaller than the page');
    t.equal((await store.get('raw/big.html'))?.toString('utf8'), page);
    await writeFile(join(dir, 'raw', 'old.html'), '<html>stored plain by an older version</html>');
    t.equal((await store.get('raw/old.html'))?.toString('utf8'), '<html>stored plain by an older version</html>');
  });

  t.test('refuses keys that could leave its folder', async (t) => {
    for (const key of ['../escape', 'a/../../b', '/etc/passwd', 'a//b', '.hidden', 'a/./b', '', 'a\\b']) {
      await t.rejects(store.put(key, 'x'), BlobKeyError, key);
      await t.rejects(store.get(key), BlobKeyError, key);
    }
  });
});
