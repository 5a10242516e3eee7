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
