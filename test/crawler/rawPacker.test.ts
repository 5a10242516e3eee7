import { createHash } from 'node:crypto';
import t from 'tap';
import { assembleRawHtml, splitRawHtml } from '../../parser/index.js';
import { rawChunkHead } from '../../parser/pages.js';
import { createRawPacker, packPage, packPageAsync, unpackRaw } from '../../services/crawler/rawPacker.js';

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
  const packed = packer.finish();
  const whole = assembleRawHtml(pages);
  t.equal(unpackRaw(packed), whole, 'the same text, byte for byte');
  t.equal(packed.sha256, createHash('sha256').update(whole).digest('hex'));
  t.equal(packed.bytes, Buffer.byteLength(whole));
  t.ok(
    packed.gzip.length < packed.bytes / 10,
    `compressed as it went (${packed.gzip.length} of ${packed.bytes} bytes)`,
  );
  t.same(
    splitRawHtml(unpackRaw(packed)).map((p) => p.start),
    [0, 10, 20],
    'reparse splits it into the same pages',
  );
});
