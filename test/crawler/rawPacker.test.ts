import { createHash, randomBytes } from 'node:crypto';
import t from 'tap';
import { assembleRawHtml, splitRawHtml } from '../../parser/index.js';
import { rawChunkHead } from '../../parser/pages.js';
import { createFsBlobStore } from '../../services/adapters/blobStore/fs.js';
import { createRawPacker, packPage, packPageAsync, unpackRaw } from '../../services/crawler/rawPacker.js';
import { removeDir, tempDataDir } from '../support/service.js';

t.test('packing pages as they come gives the raw HTML assembleRawHtml gives, with its hash and size', async (t) => {
  const pages = [0, 10, 20].map((start) => ({
    start,
    url: `https://www.google.com/search?q=caf%C3%A9&start=${start}`,
    fetchedAt: '2026-11-25T10:00:00.000Z',
    html: `<html><body>page ${start} — café ☕ ${'x'.repeat(50_000)}</body></html>`,
  }));
  const packer = createRawPacker();
  // packed where each was parsed: a worker thread (sync gzip) or the event loop (libuv's pool); the same bytes
  for (const [i, p] of pages.entries()) {
    const head = rawChunkHead(p, i === 0);
    const body = Buffer.from(p.html, 'utf8');
    packer.add(i === 1 ? await packPageAsync(head, body) : packPage(head, body));
  }
  t.equal(packer.pages, 3);
  const packed = await packer.finish();
  const whole = assembleRawHtml(pages);
  t.equal(unpackRaw(packed), whole, 'the same text, byte for byte');
  t.equal(packed.sha256, createHash('sha256').update(whole).digest('hex'));
  t.equal(packed.bytes, Buffer.byteLength(whole));
  const gzip = packed.gzip ?? Buffer.alloc(0);
  t.ok(
    gzip.length > 0 && gzip.length < packed.bytes / 10,
    `compressed as it went (${gzip.length} of ${packed.bytes} bytes)`,
  );
  t.same(
    splitRawHtml(unpackRaw(packed)).map((p) => p.start),
    [0, 10, 20],
    'reparse splits it into the same pages',
  );
});

t.test('with a blob writer, each page goes to the store as it is added and the packer keeps none', async (t) => {
  const dir = tempDataDir('packer-sink');
  t.teardown(() => removeDir(dir));
  const store = createFsBlobStore(dir);
  const pages = [0, 10, 20].map((start) => ({
    start,
    url: `https://www.google.com/search?q=tea&start=${start}`,
    fetchedAt: '2026-11-25T10:00:00.000Z',
    // incompressible enough that each member is a buffer of its own (a small one is a view into zlib's, kept)
    html: `<html><body>page ${start} ${randomBytes(60_000).toString('base64')}</body></html>`,
  }));
  const sink = store.openGzipped('raw/job-1.html');
  const packer = createRawPacker(sink);
  const members: Uint8Array[] = [];
  for (const [i, p] of pages.entries()) {
    const packed = packPage(rawChunkHead(p, i === 0), Buffer.from(p.html, 'utf8'));
    members.push(packed.member);
    packer.add(packed);
  }
  t.ok(
    members.every((m) => m.byteLength > 50_000),
    'members hold the pages (before they are written)',
  );
  const packed = await packer.finish();
  t.equal(packed.gzip, undefined, 'no copy of the pages in the outcome');
  t.equal(await store.get('raw/job-1.html'), undefined, 'not readable before the commit');
  const ref = await sink.commit(packed);
  const whole = assembleRawHtml(pages);
  t.same(ref, {
    key: 'raw/job-1.html',
    sha256: createHash('sha256').update(whole).digest('hex'),
    bytes: Buffer.byteLength(whole),
  });
  t.equal((await store.get('raw/job-1.html'))?.toString('utf8'), whole, 'the store reads the same text');
  t.same(
    members.map((m) => m.byteLength),
    [0, 0, 0],
    'each member released once written',
  );
});
