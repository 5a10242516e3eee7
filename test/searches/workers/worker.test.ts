import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import t, { type Test } from 'tap';
import { type EventOf, streams } from '../../../contracts/events.js';
import type { JobMessage } from '../../../contracts/jobMessage.js';
import { SearchRequest } from '../../../contracts/search.js';
import { usageMonth } from '../../../domain/usage/usage.js';
import { assembleRawHtml } from '../../../parser/index.js';
import { createFsBlobStore } from '../../../services/adapters/blobStore/fs.js';
import { createInProcessJobQueue } from '../../../services/adapters/jobQueue/inProcess.js';
import { composeApplication } from '../../../services/compose/application.js';
import { openCore } from '../../../services/compose/embedded/core.js';
import { loadConfig } from '../../../services/config/config.js';
import type { Crawler, CrawlOutcome } from '../../../services/crawler/crawl.js';
import type { PackedRaw } from '../../../services/crawler/rawPacker.js';
import { createDispatcher } from '../../../services/dispatcher/dispatcher.js';
import type { JobQueue } from '../../../services/ports/jobQueue.js';
import { createCrawlWorker } from '../../../services/searches/workers/worker.js';
import { removeDir, tempDataDir } from '../../support/service.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** waits for a condition; the limit only turns a hang into a failure, it measures nothing */
const until = async (condition: () => boolean | Promise<boolean>, what: string, limitMs = 15_000) => {
  const deadline = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
};

const packed = (url: string, fetchedAt: string): PackedRaw => {
  const html = assembleRawHtml([{ start: 0, url, fetchedAt, html: '<html><body>results</body></html>' }]);
  return {
    gzip: gzipSync(html),
    sha256: createHash('sha256').update(html).digest('hex'),
    bytes: Buffer.byteLength(html),
  };
};

const outcomeFor = (m: JobMessage): CrawlOutcome => {
  const fetchedAt = new Date().toISOString();
  const url = `https://www.google.com/search?q=${encodeURIComponent(m.request.keyword)}`;
  return {
    status: 'done',
    pages: [{ start: 0, url, status: 200, fetchedAt, organicCount: 1, fetcher: 'fake' }],
    result: {
      organic_results: [{ position: 1, title: m.request.keyword, link: 'https://example.com/' }],
      serp_features: {},
      information: {},
    },
    raw: packed(url, fetchedAt),
    blocks: 0,
    targeting: { gl: 'us', hl: 'en', googleDomain: 'google.com', device: m.request.device },
  };
};

/**
 * A crawler that takes as long as `wait` says and then succeeds. It ignores its abort signal on purpose: the worst
 * case, a crawl that finishes after the worker gave up on it.
 */
const fakeCrawler = (wait: (call: number) => Promise<unknown>) => {
  const calls: Array<{ jobId: string; attemptSignal?: AbortSignal }> = [];
  const running = new Set<Promise<unknown>>();
  const crawler: Crawler = {
    async crawl(m, opts) {
      calls.push({ jobId: m.jobId, attemptSignal: opts.signal });
      const done = wait(calls.length);
      running.add(done);
      await done;
      running.delete(done);
      return outcomeFor(m);
    },
    async close() {},
  };
  return { crawler, calls, settled: () => Promise.all([...running]) };
};

/** A real SQLite event store, read models and blob store in a temp dir, a key, and submitted jobs. */
const setup = async (t: Test) => {
  const dataDir = tempDataDir('worker');
  const config = loadConfig({ SERP_CACHE_TTL_S: '0' }, { dataDir });
  const core = await openCore(config);
  const { keys, searches } = composeApplication(core, config);
  t.teardown(async () => {
    await core.close();
    removeDir(dataDir);
  });
  const blobStore = createFsBlobStore(join(dataDir, 'blobs'));
  const created = await keys.create({ tier: 'free' });
  await core.projector.waitFor(created.position ?? 0);
  const key = core.queries.keys.byId(created.keyId)!;
  const messages = new Map<string, JobMessage>();
  const events = async (jobId: string) => (await core.eventStore.readStream(streams.searchJob(jobId))).events;

  return {
    core,
    key,
    async submit(n: number) {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const request = SearchRequest.parse({ keyword: `query ${i}`, capture_aio: false });
        const { jobId } = await searches.submit(key, request, {});
        const job = (await searches.jobDoc(jobId))!;
        messages.set(jobId, {
          jobId,
          dispatch: 0,
          keyId: key.keyId,
          cacheKey: job.cacheKey,
          submittedAt: job.submittedAt,
          request,
        });
        ids.push(jobId);
      }
      return ids;
    },
    message: (jobId: string) => messages.get(jobId)!,
    worker: (
      queue: JobQueue,
      crawler: Crawler,
      o: { workerId: string; concurrency?: number; heartbeatMs?: number; drainTimeoutMs?: number },
    ) =>
      createCrawlWorker({
        queue,
        handle: core.handle,
        crawler,
        blobStore,
        concurrency: 1,
        drainTimeoutMs: config.drainTimeoutMs,
        ...o,
      }),
    blobStore,
    blobsDir: join(dataDir, 'blobs'),
    events,
    types: async (jobId: string) => (await events(jobId)).map((e) => e.type),
  };
};

t.test('CrawlWorker › stop() drains', async (t) => {
  const env = await setup(t);
  const ids = await env.submit(5);
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const slow = fakeCrawler(() => gate);
  const queue = createInProcessJobQueue({ ackWaitMs: 60_000, maxDeliver: 5, dedupeWindowMs: 60_000 });
  t.teardown(() => queue.close());
  const worker = env.worker(queue, slow.crawler, { workerId: 'w1', concurrency: 3, drainTimeoutMs: 30_000 });
  worker.start();
  for (const id of ids) await queue.enqueue(env.message(id));
  await until(() => slow.calls.length === 3, 'three crawls in flight');

  let stopped = false;
  const stopping = worker.stop().then((r) => {
    stopped = true;
    return r;
  });
  await sleep(300);
  t.notOk(stopped, 'stop() waits while the three crawls run');
  release();
  t.same(await stopping, { abandoned: 0 }, 'nothing abandoned');

  const crawled = slow.calls.map((c) => c.jobId);
  t.equal(crawled.length, 3, 'no new job started after stop()');
  for (const id of crawled) {
    t.same(await env.types(id), ['SearchSubmitted', 'CrawlStarted', 'CrawlCompleted'], `${id} completed`);
  }
  const completed = (await env.events(crawled[0]!)).find((e) => e.type === 'CrawlCompleted');
  t.same(
    (completed?.data as EventOf<'CrawlCompleted'>['data'] | undefined)?.targeting,
    { gl: 'us', hl: 'en', googleDomain: 'google.com', device: 'desktop' },
    'the targeting the crawl used is recorded',
  );
  const waiting = ids.filter((id) => !crawled.includes(id));
  for (const id of waiting) t.same(await env.types(id), ['SearchSubmitted'], `${id} never started`);

  // Acked means gone: the next consumer of the same queue gets only the two that never started.
  const fast = fakeCrawler(async () => undefined);
  const next = env.worker(queue, fast.crawler, { workerId: 'w2', concurrency: 3 });
  next.start();
  await until(
    async () => (await Promise.all(waiting.map(env.types))).every((ts) => ts.includes('CrawlCompleted')),
    'the rest',
  );
  await next.stop();
  t.same(fast.calls.map((c) => c.jobId).sort(), [...waiting].sort(), 'the acked three are never delivered again');
});

t.test('CrawlWorker › heartbeat', async (t) => {
  const ackWaitMs = 300;
  const run = async (t: Test, heartbeatMs: number) => {
    const env = await setup(t);
    const [id] = await env.submit(1);
    // four ack waits long, so only the heartbeat can keep the delivery alive
    const slow = fakeCrawler(() => sleep(ackWaitMs * 4));
    const queue = createInProcessJobQueue({ ackWaitMs, maxDeliver: 5, dedupeWindowMs: 60_000 });
    t.teardown(() => queue.close());
    const a = env.worker(queue, slow.crawler, { workerId: 'a', heartbeatMs });
    const b = env.worker(queue, slow.crawler, { workerId: 'b', heartbeatMs });
    a.start();
    b.start();
    await queue.enqueue(env.message(id));
    await until(async () => (await env.types(id)).includes('CrawlCompleted'), 'the job completed');
    await slow.settled();
    await Promise.all([a.stop(), b.stop()]);
    return { env, id, slow };
  };

  await t.test('a crawl longer than the ack wait is not redelivered while the worker beats', async (t) => {
    const { env, id, slow } = await run(t, ackWaitMs / 6);
    t.equal(slow.calls.length, 1, 'crawled once');
    const started = (await env.events(id)).filter((e) => e.type === 'CrawlStarted');
    t.same(
      started.map((e) => (e.data as EventOf<'CrawlStarted'>['data']).attempt),
      [1],
      'one delivery: no other consumer got it',
    );
  });

  await t.test('without a beat inside the ack wait the same crawl is handed to another consumer', async (t) => {
    const { env, id, slow } = await run(t, ackWaitMs * 20);
    t.ok(slow.calls.length >= 2, `crawled ${slow.calls.length} times: the queue presumed the first one dead`);
    t.equal((await env.types(id)).filter((type) => type === 'CrawlCompleted').length, 1, 'still completed once');
  });
});

t.test('CrawlWorker › a crawl past the drain timeout is handed back and completes once after a restart', async (t) => {
  const env = await setup(t);
  const { core } = env;
  const [id] = await env.submit(1);

  // first life: the crawl outlasts the drain timeout (and ignores the abort)
  const queue1 = createInProcessJobQueue({ ackWaitMs: 60_000, maxDeliver: 5, dedupeWindowMs: 60_000 });
  const dispatcher1 = createDispatcher({ ...core, queue: queue1, settings: loadConfig({}) });
  const stuck = fakeCrawler(() => sleep(1_500));
  const worker1 = env.worker(queue1, stuck.crawler, { workerId: 'first', drainTimeoutMs: 200 });
  await dispatcher1.start();
  worker1.start();
  await until(() => stuck.calls.length === 1, 'the crawl started');
  t.same(await worker1.stop(), { abandoned: 1 }, 'stop() gives up on it after the drain timeout');
  t.ok(stuck.calls[0].attemptSignal?.aborted, 'and aborts it');
  t.same(
    await env.types(id),
    ['SearchSubmitted', 'CrawlStarted'],
    'neither completed nor failed: a shutdown is no failure',
  );
  await dispatcher1.stop();
  await queue1.close();

  // second life: a new queue; the dispatcher re-enqueues the job the log says is still open
  await core.projector.waitFor(await core.eventStore.headPosition());
  t.equal(core.queries.jobs.byId(id)?.status, 'running');
  const queue2 = createInProcessJobQueue({ ackWaitMs: 60_000, maxDeliver: 5, dedupeWindowMs: 60_000 });
  t.teardown(() => queue2.close());
  const dispatcher2 = createDispatcher({ ...core, queue: queue2, settings: loadConfig({}) });
  const fast = fakeCrawler(async () => undefined);
  const worker2 = env.worker(queue2, fast.crawler, { workerId: 'second' });
  await dispatcher2.start();
  worker2.start();
  await until(async () => (await env.types(id)).includes('CrawlCompleted'), 'the job completed after the restart');
  await stuck.settled();
  await sleep(100);
  await worker2.stop();
  await dispatcher2.stop();

  t.same(
    fast.calls.map((c) => c.jobId),
    [id],
    'redelivered once after the restart',
  );
  const events = await env.events(id);
  t.same(
    events.map((e) => e.type),
    ['SearchSubmitted', 'CrawlStarted', 'CrawlStarted', 'CrawlCompleted'],
    'completed exactly once, though the abandoned crawl finished too',
  );
  t.same(
    events.filter((e) => e.type === 'CrawlStarted').map((e) => (e.data as EventOf<'CrawlStarted'>['data']).worker),
    ['first', 'second'],
  );
  const month = usageMonth(env.message(id).submittedAt);
  const usage = (await core.eventStore.readStream(streams.usage(env.key.keyId, month))).events;
  t.same(
    usage.map((e) => e.type),
    ['QuotaReserved'],
    'one reservation, never released: charged once',
  );
  await core.projector.waitFor(await core.eventStore.headPosition());
  t.equal(core.queries.usage.used(env.key.keyId, month), 1);
});

t.test(
  'CrawlWorker › the raw HTML goes to the blob store page by page; a failed crawl leaves none of it',
  async (t) => {
    const env = await setup(t);
    const [good, bad] = await env.submit(2);
    const fetchedAt = new Date().toISOString();
    const pages = [0, 10].map((start) => ({
      start,
      url: `https://www.google.com/search?q=x&start=${start}`,
      fetchedAt,
    }));
    const html = assembleRawHtml(pages.map((p) => ({ ...p, html: `<html><body>page ${p.start}</body></html>` })));
    let appended = 0;
    const crawler: Crawler = {
      async crawl(m, opts) {
        // what the real crawler's packer does: each page's member to the sink as it is taken
        for (const part of html.split(/(?=\n<!-- serp-page)/)) {
          opts.rawSink?.append(gzipSync(part));
          appended += 1;
        }
        if (m.jobId === bad) {
          return { status: 'failed', pages: [], blocks: 0, reason: 'blocked', failure: { code: 'SERP_CRAWL_BLOCKED' } };
        }
        const { raw: _raw, ...rest } = outcomeFor(m);
        return {
          ...rest,
          raw: { sha256: createHash('sha256').update(html).digest('hex'), bytes: Buffer.byteLength(html) },
        };
      },
      async close() {},
    };
    const queue = createInProcessJobQueue({ ackWaitMs: 60_000, maxDeliver: 1, dedupeWindowMs: 60_000 });
    t.teardown(() => queue.close());
    const worker = env.worker(queue, crawler, { workerId: 'w1' });
    worker.start();
    for (const id of [good!, bad!]) await queue.enqueue(env.message(id));
    await until(async () => (await env.types(good!)).includes('CrawlCompleted'), 'the good job completed');
    await until(async () => (await env.types(bad!)).includes('CrawlFailed'), 'the bad job failed');
    await worker.stop();
    t.equal(appended, 4, 'both crawls wrote their pages as they went');
    const completed = (await env.events(good!)).find((e) => e.type === 'CrawlCompleted');
    const ref = (completed!.data as EventOf<'CrawlCompleted'>['data']).rawHtmlRef;
    t.equal((await env.blobStore.get(ref.key))?.toString('utf8'), html, 'the committed blob is the raw HTML, whole');
    t.equal(ref.sha256, createHash('sha256').update(html).digest('hex'));
    t.equal(await env.blobStore.get(`raw/${bad}.html`), undefined, 'the failed crawl left no blob');
    await until(() => readdirSync(join(env.blobsDir, '.partial')).length === 0, 'no part-written file left');
  },
);
