import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { BroadcastChannel } from 'node:worker_threads';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { parse } from '../../parser/index.js';
import { loadConfig } from '../../services/config/config.js';
import { inlineParser } from '../../services/crawler/readPage.js';
import { MAX_PAGE_TAGS } from '../../services/ports/pageParser.js';
import { BACKGROUND_NICE } from '../../services/threads/nice.js';
import { createParsePool } from '../../services/threads/parsePool.js';
import { armThreadFaults, threadRestarts } from '../../services/threads/threadFaults.js';
import { DEFAULT_PAGES } from '../support/fakeGoogle.js';
import { fixturesMissing, readFixtureText } from '../support/fixtures.js';

t.test(
  'the parse pool reads pages in worker threads exactly as the event loop does',
  { skip: fixturesMissing() },
  async (t) => {
    const pool = createParsePool(loadConfig({ SERP_PARSE_THREADS: '2' }));
    t.teardown(() => pool.close());
    const pages = DEFAULT_PAGES.slice(0, 4).map((p) => readFixtureText(p));
    const context = { captureAio: true, start: 0, device: 'desktop' as const, status: 200 };
    const head = '<!-- serp-page start=0 url= fetched_at= -->\n';
    // each page's bytes move to a worker (transferred) and come back with its packed chunk
    const sent = pages.map((html) => Buffer.from(html, 'utf8'));
    const fromPool = await Promise.all(sent.map((body) => pool.read(body, context, head)));
    t.same(
      sent.map((b) => b.byteLength),
      [0, 0, 0, 0],
      'a page with a buffer of its own moved to the worker (no copy)',
    );
    t.same(
      fromPool.map((r) => r.outcome),
      pages.map((html) => parse(html, context)),
      'the same outcome, page for page',
    );
    t.equal(fromPool[0]?.outcome.kind, 'serp');
    fromPool.forEach((read, i) => {
      t.equal(Buffer.from(read.raw!.body).toString('utf8'), pages[i], `page ${i}: its bytes come back whole`);
      t.equal(gunzipSync(read.raw!.member).toString('utf8'), head + pages[i], `page ${i}: the member is its chunk`);
    });
    const inline = await inlineParser.read(Buffer.from(pages[0]!, 'utf8'), context, head);
    t.same(inline.outcome, fromPool[0]?.outcome, 'the inline parser agrees');
    t.same(gunzipSync(inline.raw!.member), gunzipSync(fromPool[0]!.raw!.member), 'and packs the same chunk');
    // a small page lives in Node's shared Buffer pool: it is copied to the worker, and the pool stays usable here
    const small = Buffer.from('<html><body><form action="/sorry/index">captcha</form></body></html>', 'utf8');
    const neighbour = Buffer.from('still here', 'utf8');
    const smallLength = small.byteLength;
    const block = await pool.read(small, context, head);
    t.not(block.outcome.kind, 'serp', 'an interstitial comes back as its kind, not as an empty result');
    t.notOk(block.raw, 'and is not packed: it is never kept');
    t.equal(neighbour.toString('utf8'), 'still here', 'a Buffer beside it in the shared pool is intact');
    t.equal(small.byteLength, smallLength, 'the shared-pool page was copied, not moved');
  },
);

t.test(
  'the parse threads run below the event loop: nice 10 for each worker, the main thread untouched',
  { skip: process.platform !== 'linux' && 'thread nice values are per thread on Linux only' },
  async (t) => {
    const niceOf = (tid: string) => {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // fields after "(comm) ": state is field 3, nice is field 19
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    };
    const before = new Set(readdirSync('/proc/self/task'));
    const start = getPriority(); // 0, or 5 under `nice -n 5`
    const pool = createParsePool(loadConfig({ SERP_PARSE_THREADS: '2' }));
    t.teardown(() => pool.close());
    await Promise.all(
      [0, 1, 2, 3].map(() => pool.read(Buffer.from('<html><body>x</body></html>'), { captureAio: false }, '')),
    );
    const niced = readdirSync('/proc/self/task').filter((tid) => !before.has(tid) && niceOf(tid) === BACKGROUND_NICE);
    t.equal(niced.length, 2, 'one lowered thread per worker');
    t.equal(niceOf(String(process.pid)), start, 'the event loop keeps its priority');
  },
);

t.test('a page with more markup than any result page is not parsed, in a parse thread or inline', async (t) => {
  const pool = createParsePool(loadConfig({ SERP_PARSE_THREADS: '1' }));
  t.teardown(() => pool.close());
  const context = { captureAio: false, start: 0, device: 'desktop' as const, status: 200 };
  const head = '<!-- serp-page start=0 url= fetched_at= -->\n';
  // bare nested tags: the densest tree per byte (8 MB of them ran a 384 MB parse thread out of heap)
  const dense = () => Buffer.from(`<html><body>${'<b>'.repeat(MAX_PAGE_TAGS)}</body></html>`, 'utf8');
  const pooled = await pool.read(dense(), context, head);
  t.match(pooled.outcome, { kind: 'too_large' }, 'the parse thread refuses it before decoding');
  t.ok(pooled.outcome.kind === 'too_large' && pooled.outcome.tags > MAX_PAGE_TAGS, 'counting stops past the limit');
  t.notOk(pooled.raw, 'nothing is packed');
  t.match((await inlineParser.read(dense(), context, head)).outcome, { kind: 'too_large' }, 'inline too');
  const justUnder = Buffer.from(`<html><body>${'<i></i>'.repeat((MAX_PAGE_TAGS - 10) / 2)}</body></html>`, 'utf8');
  t.not((await pool.read(justUnder, context, head)).outcome.kind, 'too_large', 'a page at the limit is parsed');
});

t.test(
  'a parse past the deadline ends its thread, which is replaced; a crawl’s abort ends the wait for its parse',
  async (t) => {
    const pool = createParsePool(loadConfig({ SERP_PARSE_THREADS: '1', SERP_PARSE_TIMEOUT_MS: '50' }));
    t.teardown(() => pool.close());
    const context = { captureAio: false, start: 0, device: 'desktop' as const, status: 200 };
    // 110,000 elements, under the tag cap (so it is really parsed, not refused by the count): ~300 ms of parsing on
    // a quiet machine, and a small page after it parses in well under the 50 ms deadline even on a loaded one
    const slow = () => Buffer.from(`<html><body>${'<p class="a">x</p>'.repeat(110_000)}</body></html>`, 'utf8');
    t.ok(slow().toString().split('<').length - 1 < MAX_PAGE_TAGS, 'the slow page is under the tag cap');
    const started = Date.now();
    await t.rejects(pool.read(slow(), context, ''), { name: 'ParseTimeoutError', timeoutMs: 50 }, 'a typed timeout');
    t.ok(Date.now() - started < 30_000, 'at the deadline, not when the parse would have ended');
    const roomy = createParsePool(loadConfig({ SERP_PARSE_THREADS: '1', SERP_PARSE_TIMEOUT_MS: '60000' }));
    t.teardown(() => roomy.close());
    const crawl = new AbortController();
    const running = roomy.read(slow(), context, '', crawl.signal);
    setTimeout(() => crawl.abort(), 20);
    await t.rejects(running, { name: 'AbortError' }, 'the crawl’s abort ends the wait for its parse');
    const small = Buffer.from('<html><body><form action="/sorry/index">captcha</form></body></html>');
    t.not((await roomy.read(small, context, '')).outcome.kind, 'serp', 'and the thread reads the next page');
    t.not((await pool.read(Buffer.from(small), context, '')).outcome.kind, 'serp', 'as after a timeout');
  },
);

t.test('a parse thread that posts its result as its task is aborted', async (t) => {
  // the channel postedParseWorker.ts sends each thread's cell on
  const POSTED_CHANNEL = 'serp-test-parse-posted';
  const worker = new URL('./postedParseWorker.ts', import.meta.url);
  const context = { captureAio: false, start: 0, device: 'desktop' as const, status: 200 };
  const captcha = () => Buffer.from('<html><body><form action="/sorry/index">captcha</form></body></html>');
  /** each parse thread's "posted" cell, as the threads start */
  const channel = new BroadcastChannel(POSTED_CHANNEL);
  t.teardown(() => channel.close());
  const cells: Int32Array[] = [];
  let arrived: () => void = () => undefined;
  channel.onmessage = (m) => {
    cells.push(new Int32Array((m as { data: SharedArrayBuffer }).data));
    arrived();
  };
  const nextCell = async () => {
    while (cells.length === 0) await new Promise<void>((resolve) => (arrived = resolve));
    return cells.shift()!;
  };
  /** blocks this thread (its event loop does not turn) until the parse thread has posted `n` results */
  const untilPosted = (cell: Int32Array, n: number) => {
    const deadline = Date.now() + 30_000;
    for (let seen = Atomics.load(cell, 0); seen < n && Date.now() < deadline; seen = Atomics.load(cell, 0)) {
      Atomics.wait(cell, 0, seen, 1_000);
    }
    return Atomics.load(cell, 0) >= n;
  };

  await t.test('by its crawl: the read ends at once, the thread lives on and its late result is dropped', async (t) => {
    const pool = createParsePool(loadConfig({ SERP_PARSE_THREADS: '1', SERP_PARSE_TIMEOUT_MS: '60000' }), { worker });
    t.teardown(() => pool.close());
    // a thread that has read a page already (the operators' pools were warm)
    t.not((await pool.read(captcha(), context, '')).outcome.kind, 'serp', 'a warm thread');
    const cell = await nextCell();
    t.ok(untilPosted(cell, 1));
    const restarts = threadRestarts().parse;
    const crawl = new AbortController();
    const reading = pool.read(captcha(), context, '', crawl.signal);
    t.ok(untilPosted(cell, 2), 'the thread posted its result');
    // the result is on the port, not yet read: the crawl gives up on the page now (a page past a CAPTCHA)
    crawl.abort();
    await t.rejects(reading, { name: 'AbortError' }, 'the read ends as aborted');
    t.not((await pool.read(captcha(), context, '')).outcome.kind, 'serp', 'the pool reads the next page');
    t.ok(untilPosted(cell, 3), 'on the same thread: aborting a running parse does not end its thread');
    t.equal(cells.length, 0, 'no thread was started in its place');
    t.equal(threadRestarts().parse, restarts, 'nothing counted as a thread restart');
  });

  await t.test(
    'by its deadline: the thread is replaced, its stray result is dropped, the process goes on',
    async (t) => {
      const timeoutMs = 40;
      const pool = createParsePool(loadConfig({ SERP_PARSE_THREADS: '1', SERP_PARSE_TIMEOUT_MS: String(timeoutMs) }), {
        worker,
      });
      t.teardown(() => pool.close());
      t.not((await pool.read(captcha(), context, '')).outcome.kind, 'serp', 'a warm thread');
      const cell = await nextCell();
      t.ok(untilPosted(cell, 1));
      const restarts = threadRestarts().parse;
      const { reading } = await new Promise<{ reading: Promise<unknown> }>((resolve) =>
        // from the check phase: the loop's next turn runs its timers (the deadline's watchdog) before it polls the port
        setImmediate(() => {
          const read = pool.read(captcha(), context, '');
          read.catch(() => undefined);
          t.ok(untilPosted(cell, 2), 'the thread posted its result');
          // past the deadline, counted from when the thread took the page, with its result already posted
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, timeoutMs * 3);
          resolve({ reading: read });
        }),
      );
      await t.rejects(reading, { name: 'ParseTimeoutError' }, 'the watchdog ended it first: a timeout');
      t.ok((await nextCell()) instanceof Int32Array, 'a thread was started in its place');
      t.not((await pool.read(captcha(), context, '')).outcome.kind, 'serp', 'which reads the next page');
      t.equal(threadRestarts().parse, restarts + 1, 'one thread restart, counted');
    },
  );
});

t.test('a parse thread that dies with its page fails that page as a thread error, and is replaced', async (t) => {
  armThreadFaults(['parse:2']);
  t.teardown(() => armThreadFaults([]));
  const pool = createParsePool(loadConfig({ SERP_PARSE_THREADS: '1' }));
  t.teardown(() => pool.close());
  const context = { captureAio: false, start: 0, device: 'desktop' as const, status: 200 };
  const page = () => Buffer.from('<html><body><form action="/sorry/index">captcha</form></body></html>');
  const restarts = threadRestarts().parse;
  t.not((await pool.read(page(), context, '')).outcome.kind, 'serp', 'the first page reads');
  await t.rejects(
    pool.read(page(), context, ''),
    { name: 'ParseThreadError', message: /parse thread ended .*fault injected into the parse thread/ },
    'the second dies with its thread, and says so',
  );
  t.equal(threadRestarts().parse, restarts + 1, 'counted');
  t.not((await pool.read(page(), context, '')).outcome.kind, 'serp', 'a new thread reads the next page');
});
