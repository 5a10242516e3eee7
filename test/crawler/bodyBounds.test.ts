import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import type { Transform } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompressSync, constants, createBrotliCompress, createDeflate, createGzip, gzipSync } from 'node:zlib';
import t from 'tap';
import { createBrowserFetcher } from '../../services/adapters/fetcher/browser.js';
import { createHttpFetcher } from '../../services/adapters/fetcher/http.js';
import { failureDetail } from '../../services/answers/publicFailure.js';
import { MAX_PAGE_BYTES } from '../../services/ports/fetcher.js';
import { chromiumMissing, chromiumPath } from '../support/chromium.js';
import { httpCrawlerFor, jobFor } from '../support/crawlerHarness.js';
import { fixturesMissing, listSerpPages, readFixture } from '../support/fixtures.js';
import { CHROMIUM_LOOPBACK_ARG } from '../support/loopback.js';

/**
 * Bodies are bounded while they stream (docs/security.md#bodies-are-bounded-while-they-stream): a compression bomb is
 * refused at MAX_PAGE_BYTES, never inflated whole, through the real http fetcher and real HTTP on loopback.
 */
const here = dirname(fileURLToPath(import.meta.url));
const MB = 2 ** 20;
const BOMB_BYTES = 256 * MB;

/** `bytes` of zeros (or of `fill`) through a compressor, streamed a megabyte at a time so this test never holds them */
const compressZeros = async (compressor: Transform, bytes: number, fill = 0): Promise<Buffer> => {
  const out: Buffer[] = [];
  compressor.on('data', (c: Buffer) => out.push(c));
  const zeros = Buffer.alloc(MB, fill);
  for (let at = 0; at < bytes; at += MB) {
    if (!compressor.write(zeros)) await once(compressor, 'drain');
  }
  compressor.end();
  await once(compressor, 'end');
  return Buffer.concat(out);
};

/**
 * A gzip stream that never ends and never inflates to a byte: its header, then empty stored blocks (five bytes each),
 * as much as asked. Only the count of compressed bytes can stop it.
 */
const endlessEmptyGzip = (bytes: number): Buffer[] => {
  const header = Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0x03]);
  const blocks = Buffer.alloc(MB);
  for (let at = 0; at + 5 <= blocks.length; at += 5) blocks.set([0x00, 0x00, 0x00, 0xff, 0xff], at);
  return [header, ...Array.from({ length: Math.ceil(bytes / MB) }, () => blocks.subarray(0, MB - (MB % 5)))];
};

const skipFixtures = fixturesMissing();
const fixturePage = skipFixtures ? Buffer.alloc(0) : readFixture(listSerpPages()[0] ?? '');

/** what the origin answers, by the search's `q` (so the crawler's own URLs reach it too) */
const bombs = {
  gzip: await compressZeros(createGzip({ level: 9 }), BOMB_BYTES),
  deflate: await compressZeros(createDeflate({ level: 9 }), BOMB_BYTES),
  // a 16 MB window, the largest a brotli decoder is asked to keep
  br: await compressZeros(
    createBrotliCompress({
      params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_LGWIN]: 24 },
    }),
    BOMB_BYTES,
  ),
};
const gzippedPage = gzipSync(fixturePage);
/** 256 MB of text: Chromium drops NULs as it parses, so the browser's bomb is letters */
const textBomb = await compressZeros(createGzip({ level: 9 }), BOMB_BYTES, 0x61);
/** a body within the cap that compresses as well as a bomb does: it must still come back whole */
const dense = Buffer.from('<p>same</p>'.repeat(Math.floor((MAX_PAGE_BYTES - 4096) / 11)));
const denseCoded = { gzip: gzipSync(dense), br: brotliCompressSync(dense) };

const startOrigin = async (): Promise<{
  origin: string;
  hits: Map<string, number>;
  finished: Map<string, Promise<boolean>>;
  server: Server;
}> => {
  const hits = new Map<string, number>();
  /** per answer, whether the origin got to send all of it before its connection closed */
  const finished = new Map<string, Promise<boolean>>();
  const server = createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams.get('q') ?? '';
    hits.set(q, (hits.get(q) ?? 0) + 1);
    // the client going away mid-body is the point of most answers here
    res.on('error', () => undefined);
    const html = { 'content-type': 'text/html; charset=UTF-8' };
    if (q in bombs) {
      return res.writeHead(200, { ...html, 'content-encoding': q }).end(bombs[q as keyof typeof bombs]);
    }
    finished.set(q, new Promise((resolve) => res.once('close', () => resolve(res.writableFinished))));
    if (q === 'endless-empty-gzip') {
      res.writeHead(200, { ...html, 'content-encoding': 'gzip' });
      const parts = endlessEmptyGzip(2 * MAX_PAGE_BYTES);
      const next = () => {
        while (parts.length > 0 && !res.destroyed) {
          if (!res.write(parts.shift())) return void res.once('drain', next);
        }
        res.end();
      };
      return next();
    }
    if (q === 'declared-oversize') {
      // says 9 MB, sends 64 kB and then nothing: only a client that believes the header answers before its timeout
      res.writeHead(200, { ...html, 'content-length': MAX_PAGE_BYTES + MB });
      return void res.write(Buffer.alloc(64 * 1024, 'a'));
    }
    if (q === 'plain-oversize') {
      return res.writeHead(200, html).end(Buffer.alloc(MAX_PAGE_BYTES + 1, 'a'));
    }
    if (q === 'dense-gzip' || q === 'dense-br') {
      const coding = q === 'dense-gzip' ? 'gzip' : 'br';
      return res.writeHead(200, { ...html, 'content-encoding': coding }).end(denseCoded[coding]);
    }
    if (q === 'text-bomb') return res.writeHead(200, { ...html, 'content-encoding': 'gzip' }).end(textBomb);
    if (q === 'small') return res.writeHead(200, { ...html, 'content-encoding': 'gzip' }).end(gzipSync('<p>hi</p>'));
    if (q === 'page') return res.writeHead(200, { ...html, 'content-encoding': 'gzip' }).end(gzippedPage);
    if (q === 'reset-mid-body') {
      res.writeHead(200, { ...html, 'content-encoding': 'gzip', 'content-length': gzippedPage.length });
      res.write(gzippedPage.subarray(0, gzippedPage.length >> 1));
      // the bytes reach the client, then the connection is reset
      return void setTimeout(() => res.socket?.resetAndDestroy(), 50);
    }
    if (q === 'gzip-cut-short') {
      // a clean end of the HTTP body, but the gzip stream stops halfway
      return res.writeHead(200, { ...html, 'content-encoding': 'gzip' }).end(gzippedPage.subarray(0, 2000));
    }
    return res.writeHead(404, html).end('no such answer');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, finished, server };
};

t.test('a body is bounded while it streams', async (t) => {
  const { origin, hits, finished, server } = await startOrigin();
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const fetcher = createHttpFetcher({ http2: false });
  const get = (q: string) =>
    fetcher.fetch({
      url: `${origin}/search?q=${q}`,
      device: 'desktop',
      captureAio: false,
      timeoutMs: 60_000,
    });

  t.test('compression bombs stop at the page cap', async (t) => {
    for (const coding of Object.keys(bombs) as (keyof typeof bombs)[]) {
      const page = await get(coding);
      t.equal(page.overLimit, true, `${coding}: ${bombs[coding].length} bytes inflating to 256 MB are over the cap`);
      t.equal(page.body.byteLength, 0, `${coding}: nothing of the body is kept`);
      t.ok(page.bytes !== undefined && page.bytes <= bombs[coding].length, `${coding}: at most the bomb was read`);
    }
  });

  t.test('compressed bytes are bounded too: a stream that inflates to nothing is stopped at the cap', async (t) => {
    const page = await get('endless-empty-gzip');
    t.equal(page.overLimit, true);
    t.equal(await finished.get('endless-empty-gzip'), false, 'the connection was closed before the origin was done');
    t.ok(
      (page.bytes ?? 0) <= MAX_PAGE_BYTES + MB,
      `stopped after ${page.bytes} bytes on the wire, not the ${2 * MAX_PAGE_BYTES} sent`,
    );
    const plain = await get('plain-oversize');
    t.equal(plain.overLimit, true, 'an uncompressed body one byte over the cap is over it');
  });

  t.test('a body whose Content-Length is over the cap is refused without reading it', async (t) => {
    const started = Date.now();
    const page = await get('declared-oversize');
    t.equal(page.overLimit, true, 'over the cap by its own header');
    t.equal(page.bytes, 0, 'not a byte of it read');
    t.ok(Date.now() - started < 30_000, 'answered at once, not after the 60 s the origin would make it wait');
    t.equal(await finished.get('declared-oversize'), false, 'the connection was closed before the origin was done');
  });

  t.test('a normal gzipped page still reads whole', { skip: skipFixtures }, async (t) => {
    const page = await get('page');
    t.equal(page.status, 200);
    t.notOk(page.overLimit);
    t.ok(page.body.equals(fixturePage), `the same ${fixturePage.length} bytes as the fixture`);
    t.equal(page.bytes, gzippedPage.length, 'its bytes counted as they came over the wire');
  });

  t.test('a page within the cap that compresses like a bomb still reads whole', async (t) => {
    for (const coding of ['gzip', 'br'] as const) {
      const page = await get(`dense-${coding}`);
      t.notOk(page.overLimit, `${coding}: not over the cap`);
      t.ok(
        page.body.equals(dense),
        `${coding}: the same ${dense.length} bytes from ${denseCoded[coding].length} compressed`,
      );
    }
  });

  t.test(
    'a body that breaks off fails the fetch as a network error, not a crash',
    { skip: skipFixtures },
    async (t) => {
      await t.rejects(get('reset-mid-body'), { code: 'ECONNRESET' }, 'a reset mid-body');
      await t.rejects(get('gzip-cut-short'), { code: 'Z_BUF_ERROR' }, 'a gzip stream cut short: never a partial page');
    },
  );

  t.test('through the crawler', async (t) => {
    const { crawler } = httpCrawlerFor(origin);
    t.teardown(() => crawler.close());
    const heartbeat = () => undefined;

    t.test('a bomb fails the search at once as too large, its owner told why', async (t) => {
      const before = hits.get('gzip') ?? 0;
      const outcome = await crawler.crawl(jobFor({ keyword: 'gzip', depth: 10 }), { heartbeat });
      t.equal(outcome.status, 'failed');
      t.same(outcome.failure, { code: 'SERP_CRAWL_BAD_REQUEST', kind: 'page_too_large', httpStatus: 200 });
      t.equal((hits.get('gzip') ?? 0) - before, 1, 'fetched once: another try would get the same page');
      t.match(outcome.reason, /over the 8388608 bytes the crawler reads: the fetcher stopped reading it there/);
      t.match(failureDetail(outcome.failure!), /larger than any result page the crawler reads \(over 8 MB/);
    });

    t.test(
      'a reset mid-body is transient: retried, then failed as a network error',
      { skip: skipFixtures },
      async (t) => {
        const before = hits.get('reset-mid-body') ?? 0;
        const outcome = await crawler.crawl(jobFor({ keyword: 'reset-mid-body', depth: 10 }), { heartbeat });
        t.equal(outcome.status, 'failed');
        t.match(outcome.failure, { code: 'SERP_CRAWL_TRANSIENT', kind: 'network' });
        t.equal((hits.get('reset-mid-body') ?? 0) - before, 3, 'every try of FAST_LIMITS was made');
      },
    );

    t.test('a normal gzipped page is crawled', { skip: skipFixtures }, async (t) => {
      const outcome = await crawler.crawl(jobFor({ keyword: 'page', depth: 10 }), { heartbeat });
      t.equal(outcome.status, 'done');
      t.ok((outcome.result?.organic_results ?? []).length > 0, 'with its organic results');
    });
  });

  /** `paths` fetched at once by a process of its own (bodyBoundsChild.ts), after a small gzipped page warmed it up */
  const rssOf = async (paths: string[]) => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', join(here, 'bodyBoundsChild.ts'), origin, '/search?q=small', ...paths],
      { timeout: 120_000 },
    );
    return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
      before: number;
      peak: number;
      after: number;
      pages: { overLimit: boolean; body: number }[];
    };
  };
  const mb = (n: number) => `${(n / MB).toFixed(1)} MB`;

  t.test('four gzip bombs at once raise RSS by no more than 50 MB, at any moment', async (t) => {
    const m = await rssOf(Array.from({ length: 4 }, () => '/search?q=gzip'));
    t.same(
      m.pages.map((p) => [p.overLimit, p.body]),
      Array.from({ length: 4 }, () => [true, 0]),
      'all four refused',
    );
    t.ok(m.after - m.before <= 50 * MB, `RSS ${mb(m.before)} before, ${mb(m.after)} after`);
    t.ok(m.peak - m.before <= 50 * MB, `and ${mb(m.peak)} at its peak (they inflate to 1 GB together)`);
  });

  t.test('so do bombs of every coding at once, but for what brotli windows hold while they last', async (t) => {
    const m = await rssOf(['/search?q=gzip', '/search?q=deflate', '/search?q=br', '/search?q=br']);
    t.same(
      m.pages.map((p) => p.overLimit),
      [true, true, true, true],
      'all four refused',
    );
    t.ok(m.after - m.before <= 50 * MB, `RSS ${mb(m.before)} before, ${mb(m.after)} after`);
    // a brotli decoder keeps its stream's window, 16 MB at most by the format (RFC 7932), until the stream ends
    t.ok(m.peak - m.before <= 50 * MB + 2 * 16 * MB, `and ${mb(m.peak)} at its peak, with two brotli windows of 16 MB`);
  });

  t.test(
    'through Chromium, a bomb is refused before its page reaches this process',
    { skip: chromiumMissing() },
    async (t) => {
      const browser = createBrowserFetcher({ executablePath: chromiumPath, extraArgs: [CHROMIUM_LOOPBACK_ARG] });
      t.teardown(() => browser.close());
      const fetch = (q: string) =>
        browser.fetch({ url: `${origin}/search?q=${q}`, device: 'desktop', captureAio: false, timeoutMs: 60_000 });
      // Chromium and Playwright loaded, so that what follows counts the pages only
      await fetch('small');
      const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
      gc();
      const before = process.memoryUsage().rss;
      for (const q of ['text-bomb', 'gzip']) {
        const page = await fetch(q);
        t.equal(page.overLimit, true, `${q}: over the cap`);
        t.equal(page.body.byteLength, 0, `${q}: nothing of it kept`);
      }
      gc();
      const after = process.memoryUsage().rss;
      t.ok(after - before <= 50 * MB, `RSS ${(before / MB).toFixed(1)} MB before, ${(after / MB).toFixed(1)} MB after`);
      const small = await fetch('small');
      t.match(small.body.toString(), /<p>hi<\/p>/, 'a small page still reads');
      t.notOk(small.overLimit);
    },
  );
});
