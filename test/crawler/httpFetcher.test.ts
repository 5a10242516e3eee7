import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import t from 'tap';
import { createHttpFetcher } from '../../services/adapters/fetcher/http.js';
import { ownBuffer } from '../../services/buffers.js';

/**
 * The http fetcher (services/adapters/fetcher/http.ts): whatever the framing (a length, chunks, gzip, brotli, a
 * redirect first) the bytes must be the page's exactly, and a page of any size in a buffer of its own, which a parse
 * thread can take without a copy (Node's shared pool holds only buffers under 4 kB).
 */
t.test('the http fetcher returns the page as sent, however it is framed', async (t) => {
  // text of many sizes: empty, small, just past the first buffer, several doublings past it
  const pages: Record<string, Buffer> = {
    empty: Buffer.alloc(0),
    small: Buffer.from('<html><title>x - Google Search</title>ünïcödé</html>'),
    half: Buffer.from(randomBytes(256 * 1024).toString('base64')),
    big: Buffer.from(randomBytes(2_300_000).toString('base64')),
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const page = pages[url.searchParams.get('page') ?? ''] ?? Buffer.alloc(0);
    const how = url.searchParams.get('how');
    const send = (r: ServerResponse, status: number, headers: Record<string, string | number>, body: Buffer) => {
      r.writeHead(status, { 'content-type': 'text/html; charset=UTF-8', ...headers });
      // in pieces of odd sizes, so reads never line up with the buffer's doublings
      for (let at = 0; at < body.length; at += 70_001) r.write(body.subarray(at, at + 70_001));
      r.end();
    };
    if (how === 'length') return send(res, 200, { 'content-length': page.length }, page);
    if (how === 'chunked') return send(res, 200, {}, page);
    if (how === 'gzip') return send(res, 200, { 'content-encoding': 'gzip' }, gzipSync(page));
    if (how === 'br') return send(res, 200, { 'content-encoding': 'br' }, brotliCompressSync(page));
    if (how === 'redirect') {
      res.writeHead(302, { location: `/final?page=${url.searchParams.get('page')}&how=length` });
      return res.end();
    }
    return send(res, 429, { 'set-cookie': 'X=1' }, Buffer.from('slow down'));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fetcher = createHttpFetcher();
  const get = (path: string) =>
    fetcher.fetch({ url: `${origin}${path}`, device: 'desktop', captureAio: false, timeoutMs: 10_000 });

  for (const how of ['length', 'chunked', 'gzip', 'br', 'redirect']) {
    for (const [name, page] of Object.entries(pages)) {
      const got = await get(`/search?page=${name}&how=${how}`);
      t.equal(got.status, 200, `${how} ${name}: status`);
      t.ok(got.body.equals(page), `${how} ${name}: the same ${page.length} bytes`);
      if (page.length > 4096) t.ok(ownBuffer(got.body), `${how} ${name}: a buffer of its own`);
    }
  }
  const redirected = await get('/search?page=small&how=redirect');
  t.match(redirected.finalUrl, /\/final\?page=small/, 'the final URL after the redirect');
  const refused = await get('/search?page=small&how=none');
  t.equal(refused.status, 429, 'an error status comes back as a page, not an exception');
  t.equal(refused.body.toString(), 'slow down');
  t.match(refused.cookies, /X=1/, 'its cookies are kept');
});
