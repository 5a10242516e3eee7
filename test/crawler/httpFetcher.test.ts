import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib, { brotliCompressSync, constants, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import t from 'tap';
import { createHttpFetcher, followsRedirect } from '../../services/adapters/fetcher/http.js';
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
    // "deflate" as RFC 9110 has it (zlib) and as some servers send it (raw): a browser reads both
    if (how === 'deflate') return send(res, 200, { 'content-encoding': 'deflate' }, deflateSync(page));
    if (how === 'deflate-raw') return send(res, 200, { 'content-encoding': 'deflate' }, deflateRawSync(page));
    // quality 5 as servers send it on the fly (11, the default, took 20 s on the 3 MB page of a loaded machine)
    const br = (b: Buffer) => brotliCompressSync(b, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } });
    if (how === 'br') return send(res, 200, { 'content-encoding': 'br' }, br(page));
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

  for (const how of ['length', 'chunked', 'gzip', 'deflate', 'deflate-raw', 'br', 'redirect']) {
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

t.test('the http fetcher asks only for the encodings it can decode', async (t) => {
  let asked = '';
  const server = createServer((req, res) => {
    asked = String(req.headers['accept-encoding'] ?? '');
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await createHttpFetcher().fetch({ url: `${origin}/search`, device: 'mobile', captureAio: false, timeoutMs: 10_000 });
  const decodes = typeof (zlib as unknown as { createZstdDecompress?: unknown }).createZstdDecompress === 'function';
  t.same(
    asked.split(',').map((e) => e.trim()),
    decodes ? ['gzip', 'deflate', 'br', 'zstd'] : ['gzip', 'deflate', 'br'],
    `Chrome's list${decodes ? '' : ', less zstd, which this Node cannot decode'}`,
  );
});

t.test('cookies set on a redirect go to the next hop and back to the session', async (t) => {
  const seen: Record<string, string | undefined> = {};
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    seen[path] = req.headers.cookie;
    if (path === '/search') {
      // as Google's consent and /sorry/ hops do: cookies on the redirect itself, one of the session's taken back
      res.writeHead(302, {
        location: '/consent',
        'set-cookie': ['SOCS=granted; Path=/; Max-Age=3600', 'OLD=; Max-Age=0'],
      });
      return res.end();
    }
    if (path === '/consent') {
      res.writeHead(302, { location: '/final', 'set-cookie': 'AEC=two; Path=/; HttpOnly' });
      return res.end();
    }
    res.writeHead(200, { 'content-type': 'text/html', 'set-cookie': 'NID=3; Path=/' });
    res.end('<html>results</html>');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const page = await createHttpFetcher().fetch({
    url: `${origin}/search?q=coffee`,
    device: 'desktop',
    captureAio: false,
    timeoutMs: 10_000,
    session: { id: 's1', userAgent: 'Mozilla/5.0', cookies: 'SID=1; OLD=x' },
  });
  t.equal(page.status, 200);
  t.match(page.finalUrl, /\/final$/);
  t.equal(seen['/search'], 'SID=1; OLD=x', 'the first request carries the session cookies');
  t.equal(seen['/consent'], 'SID=1; SOCS=granted', 'the next hop carries what the redirect set, not what it deleted');
  t.equal(seen['/final'], 'SID=1; SOCS=granted; AEC=two', 'and every hop after it');
  t.equal(page.cookies, 'SID=1; SOCS=granted; AEC=two; NID=3', 'the session gets every cookie of the chain back');

  const bare = await createHttpFetcher().fetch({
    url: `${origin}/final`,
    device: 'desktop',
    captureAio: false,
    timeoutMs: 10_000,
  });
  t.equal(seen['/final'], undefined, 'no session, no cookies: no Cookie header at all');
  t.equal(bare.cookies, 'NID=3');
});

t.test('redirects are followed within the origin asked, or to /sorry/, never elsewhere', async (t) => {
  // another origin (a port of its own on loopback) standing for a captive portal or any other site
  let elsewhereHits = 0;
  const elsewhere = createServer((_req, res) => {
    elsewhereHits++;
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html>portal</html>');
  });
  elsewhere.listen(0, '127.0.0.1');
  await once(elsewhere, 'listening');
  t.teardown(() => elsewhere.close());
  const portal = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/login`;
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/search') return res.writeHead(302, { location: '/search2' }).end();
    if (path === '/search2') return res.writeHead(200, { 'content-type': 'text/html' }).end('<html>results</html>');
    if (path === '/away') return res.writeHead(302, { location: portal }).end();
    return res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fetcher = createHttpFetcher();
  const get = (path: string) =>
    fetcher.fetch({ url: `${origin}${path}`, device: 'desktop', captureAio: false, timeoutMs: 10_000 });
  const within = await get('/search');
  t.equal(within.status, 200, 'within the origin: followed');
  t.equal(within.body.toString(), '<html>results</html>');
  const away = await get('/away');
  t.equal(away.status, 302, 'to another origin: the redirect itself comes back');
  t.equal(away.redirectedTo, portal, 'with where it led');
  t.equal(elsewhereHits, 0, 'and the other origin is never asked');
  t.ok(
    followsRedirect('https://www.google.de/search?q=x', 'https://www.google.com/sorry/index?continue=x'),
    "to Google's CAPTCHA page on another Google host: followed (the crawler must see it)",
  );
  t.notOk(
    followsRedirect('https://www.google.de/search?q=x', 'https://www.google.com/search?q=x'),
    'other Google pages are not',
  );
  t.notOk(
    followsRedirect('https://www.google.com/search?q=x', 'https://evil.example/sorry/index'),
    'nor a /sorry/ elsewhere',
  );
  t.notOk(followsRedirect('https://www.google.com/search?q=x', 'http://www.google.com/sorry/index'), 'nor plain http');
  t.ok(
    followsRedirect('https://www.google.com/search?q=x', '/search?q=x&start=10'),
    'a relative one within the origin',
  );
});
