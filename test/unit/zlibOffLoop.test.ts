import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import t from 'tap';
import { brotliOffLoop, gunzipOffLoop, gzipOffLoop } from '../../services/zlib.js';

/**
 * Compression off the event loop (the raw HTML and results the service stores, the answers it sends): what it writes
 * is plain gzip and brotli any client reads, whatever the size.
 */
const page = '<html><body>'.concat(
  '<div class="g"><a href="https://example.com/">Example</a></div>'.repeat(20_000),
  '</body></html>',
);

t.test('zlib off the loop', async (t) => {
  const gz = await gzipOffLoop(page);
  t.equal(gunzipSync(gz).toString('utf8'), page, 'a 1.2 MB page gzips to what any gunzip reads back');
  t.ok(gz.length < page.length / 20, `and small (${gz.length} bytes)`);
  t.equal((await gunzipOffLoop(gzipSync(Buffer.from(page)))).toString('utf8'), page, 'gzip from elsewhere reads back');
  t.equal((await gunzipOffLoop(await gzipOffLoop(''))).length, 0, 'nothing stays nothing');
  const br = await brotliOffLoop(page, 4);
  t.equal(brotliDecompressSync(br).toString('utf8'), page, 'brotli any client decodes');
  await t.rejects(gunzipOffLoop(Buffer.from('not gzip')), 'a blob that is not gzip is an error, never garbage');
});

t.test('zlib off the loop › what it returns holds its own bytes, not the chunk it was written into', async (t) => {
  // a view into a larger buffer keeps all of it alive: a stored answer's brotli form of a few kB held a buffer the size
  // of its answer, past what the stored answers' byte bound counted (docs/operations.md#memory). Node's pool holds a
  // small copy in a shared 8 kB slab, which is not the chunk either.
  const held = (b: Buffer) => (b.byteLength < 4096 ? b.byteLength : b.buffer.byteLength);
  // an answer's JSON of distinct results (a few hundred kB; a repeated string would compress to nothing)
  let seed = 7;
  const word = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return `w${seed.toString(36)}`;
  };
  const answer = JSON.stringify(
    Array.from({ length: 3000 }, (_, i) => ({
      position: i + 1,
      title: `${word()} ${word()}`,
      link: `https://${word()}.example/`,
    })),
  );
  const br = await brotliOffLoop(answer, 4);
  t.ok(
    br.length > 4096 && br.length < answer.length / 2,
    `brotli makes a smaller form (${br.length} of ${answer.length} bytes)`,
  );
  t.equal(held(br), br.byteLength, 'which holds only its own bytes');
  const gz = await gzipOffLoop(answer);
  t.equal(held(gz), gz.byteLength, 'so does a gzip form');
  const small = '<html><body>'.concat('<p>x</p>'.repeat(30_000), '</body></html>');
  const inflated = await gunzipOffLoop(gzipSync(Buffer.from(small)));
  t.equal(inflated.toString('utf8'), small, 'a page read back whole');
  t.equal(held(inflated), inflated.byteLength, 'in a buffer of its size, not the 1 MiB chunk it was inflated into');
});
