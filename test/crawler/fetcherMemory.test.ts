import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t from 'tap';
import { createHttpFetcher } from '../../services/adapters/fetcher/http.js';
import type { FetchRequest } from '../../services/ports/fetcher.js';

/**
 * The http fetcher keeps no page once it has returned it (docs/decisions.md#memory). The crawl gives each page the
 * signal `AbortSignal.any([job, page])` (services/crawler/crawl.ts), which Node keeps alive while it has an 'abort'
 * listener and has not aborted; got's listener on it was never removed, so every page's request and the body it read
 * stayed reachable: a service's RSS grew by its crawled bytes, ~2.5 MB/s in the soak, without end. Real HTTP on
 * loopback, the fetcher as the crawler calls it.
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const PAGE_BYTES = 1024 * 1024;
const PAGES = 60;
const MB = 2 ** 20;

const page = Buffer.alloc(PAGE_BYTES, 'a');
const server = createServer((req, res) => {
  if (req.url?.startsWith('/hang')) {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.write('<html>');
    return; // the body never ends: only an abort ends the fetch
  }
  res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(page.length) });
  res.end(page);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
t.teardown(() => {
  server.closeAllConnections();
  server.close();
});

const fetcher = createHttpFetcher({ http2: false });
/** a page's signal as the crawl makes it: the job's, joined with the page's own */
const job = new AbortController();
const pageSignal = () => AbortSignal.any([job.signal, new AbortController().signal]);
const get = (path: string, signal: AbortSignal, timeoutMs = 10_000): FetchRequest => ({
  url: `${origin}${path}`,
  device: 'desktop',
  captureAio: false,
  timeoutMs,
  signal,
});

const settle = async () => {
  for (let i = 0; i < 4; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
};
const arrayBuffers = () => process.memoryUsage().arrayBuffers;

t.test('pages fetched with the crawl’s signal are freed once the caller drops them', async (t) => {
  // one fetch first, so the connection pool and got's own state are part of the baseline
  await fetcher.fetch(get('/warm', pageSignal()));
  await settle();
  const before = arrayBuffers();
  let received = 0;
  for (let i = 0; i < PAGES; i++) {
    const got = await fetcher.fetch(get(`/search?q=page&start=${i * 10}`, pageSignal()));
    received += got.body.length;
  }
  t.equal(received, PAGES * PAGE_BYTES, 'every page came back whole');
  await settle();
  const grew = (arrayBuffers() - before) / MB;
  // kept, the 60 pages' bodies are 60 MB (twice that with the chunks read); freed, what is left is a few buffers
  t.ok(grew < 10, `array buffers grew by ${grew.toFixed(1)} MB after ${PAGES} pages of 1 MB (under 10 MB)`);
});

t.test('the page’s signal still stops a fetch in flight', async (t) => {
  const ours = new AbortController();
  const signal = AbortSignal.any([job.signal, ours.signal]);
  const fetching = fetcher.fetch(get('/hang', signal, 60_000));
  setTimeout(() => ours.abort(new Error('the page was abandoned')), 100);
  const started = Date.now();
  await t.rejects(fetching, 'the fetch rejects when its page is aborted');
  t.ok(Date.now() - started < 10_000, 'at once, not at the 60 s deadline');
});

t.test('a signal already aborted stops the fetch before it starts', async (t) => {
  const ours = new AbortController();
  ours.abort(new Error('abandoned'));
  await t.rejects(fetcher.fetch(get('/search?q=late', AbortSignal.any([ours.signal]))));
});
