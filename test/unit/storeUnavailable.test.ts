import { join } from 'node:path';
import t, { type Test } from 'tap';
import { streams } from '../../contracts/events.js';
import { SearchRequest } from '../../contracts/search.js';
import { searchJobDecider } from '../../domain/searchJob/searchJob.js';
import { usageMonth } from '../../domain/usage/usage.js';
import { allProjections, readModelQueries } from '../../projections/index.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createInProcessJobQueue } from '../../services/adapters/jobQueue/inProcess.js';
import { createMemoryRateLimiter } from '../../services/adapters/rateLimiter/memory.js';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';
import { createServer } from '../../services/api/server.js';
import { createCommandHandler } from '../../services/application/commandHandler.js';
import { composeApi, composeApplication } from '../../services/compose/application.js';
import { loadConfig } from '../../services/config/config.js';
import { createDispatcher } from '../../services/dispatcher/dispatcher.js';
import { createLocationResolver } from '../../services/geo/locations.js';
import { type EventStore, StoreUnavailableError } from '../../services/ports/eventStore.js';
import { createProjector } from '../../services/projector/projector.js';
import { apiBlobStore } from '../support/apiBlobStore.js';
import { removeDir, tempDataDir } from '../support/service.js';

/**
 * What distributed mode's stores may do and embedded mode's never do: fail to answer. An event store whose job
 * appends can be made to fail before writing, or after writing (an outcome the caller cannot know), shows what the
 * submit path and the HTTP surface make of it; and a dispatcher starting from scratch over a finished job.
 */
const setup = async (t: Test) => {
  const dir = tempDataDir('serp-unavailable');
  const inner = createSqliteEventStore({ path: join(dir, 'events.db'), pollIntervalMs: 20 });
  const mode = { jobAppend: 'ok' as 'ok' | 'fails' | 'fails-after-writing' };
  const store: EventStore = {
    appendToStream: async (stream, events, options) => {
      if (stream.startsWith('searchJob-') && mode.jobAppend === 'fails') {
        throw new StoreUnavailableError('event store (test)', new Error('timeout'));
      }
      const res = await inner.appendToStream(stream, events, options);
      if (stream.startsWith('searchJob-') && mode.jobAppend === 'fails-after-writing') {
        throw new StoreUnavailableError('event store (test)', new Error('timeout'));
      }
      return res;
    },
    readStream: (s, o) => inner.readStream(s, o),
    readAll: (o) => inner.readAll(o),
    subscribeToAll: (from, handler) => inner.subscribeToAll(from, handler),
    headPosition: () => inner.headPosition(),
    close: () => inner.close(),
  };
  const readModels = createSqliteReadModelStore(join(dir, 'read.db'));
  const projector = createProjector({ eventStore: store, readModels, projections: allProjections });
  await projector.start();
  const queries = readModelQueries(readModels);
  const handle = createCommandHandler(store);
  const config = loadConfig({}, { dataDir: dir });
  const secrets = {
    keyPepper: 'pepper-pepper-pepper',
    adminToken: 'adm_test_token_0123',
    linkSecret: 'link-secret-0123',
  };
  const projected = (position: number) => projector.waitFor(position);
  const ports = { eventStore: store, queries, handle, secrets, projected };
  const { keys, searches } = composeApplication(ports, config);
  const created = await keys.create({ tier: 'free' });
  await projector.waitFor(created.position ?? 0);
  const doc = queries.keys.byId(created.keyId);
  if (!doc) throw new Error('key not projected');
  t.teardown(async () => {
    await projector.stop();
    readModels.close();
    await inner.close();
    removeDir(dir);
  });
  const usageEvents = async () =>
    (await store.readStream(streams.usage(doc.keyId, usageMonth(new Date().toISOString())))).events.map((e) => e.type);
  return {
    dir,
    config,
    ports,
    store,
    mode,
    readModels,
    projector,
    queries,
    handle,
    doc,
    created,
    searches,
    usageEvents,
  };
};

t.test('submit › a job append that fails hands the reservation back', async (t) => {
  const s = await setup(t);
  s.mode.jobAppend = 'fails';
  await t.rejects(s.searches.submit(s.doc, SearchRequest.parse({ keyword: 'lost' }), {}), StoreUnavailableError);
  t.same(await s.usageEvents(), ['QuotaReserved', 'QuotaReleased'], 'reserved, then released: nothing charged');
});

t.test('submit › a job append whose answer was lost but which landed stands', async (t) => {
  const s = await setup(t);
  s.mode.jobAppend = 'fails-after-writing';
  const out = await s.searches.submit(s.doc, SearchRequest.parse({ keyword: 'landed' }), {});
  t.equal(out.status, 'queued', 'the submit is acknowledged');
  t.equal((await s.store.readStream(streams.searchJob(out.jobId))).events[0]?.type, 'SearchSubmitted');
  t.same(await s.usageEvents(), ['QuotaReserved'], 'charged once, not released');
});

t.test('http › an unavailable store is a 503 with Retry-After, in both error shapes', async (t) => {
  const s = await setup(t);
  const rateLimiter = createMemoryRateLimiter();
  const locations = createLocationResolver(s.dir);
  const app = await createServer(
    composeApi({ ...s.ports, blobStore: apiBlobStore, rateLimiter, locations }, s.config),
    { settings: s.config, logger: false },
  );
  t.teardown(async () => {
    await app.close();
    await rateLimiter.close();
    locations.close();
  });
  s.mode.jobAppend = 'fails';
  const v1 = await app.inject({
    method: 'POST',
    url: '/v1/search',
    headers: { 'x-api-key': s.created.key, 'content-type': 'application/json' },
    payload: { keyword: 'busy' },
  });
  t.equal(v1.statusCode, 503);
  t.equal(v1.headers['retry-after'], '2');
  t.match(v1.json(), { code: 'SERP_API_UNAVAILABLE', detail: /nothing was recorded/ });
  const compat = await app.inject({ url: `/search.json?engine=google&q=busy&api_key=${s.created.key}` });
  t.equal(compat.statusCode, 503);
  t.match(compat.json(), { error: /nothing was recorded/ });
  const doc = (await app.inject({ url: '/openapi.json' })).json() as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  t.ok(doc.paths['/v1/search'].post.responses['503'], 'documented on /v1');
  t.ok(doc.paths['/search.json'].get.responses['503'], 'documented on compat');
  t.notOk(doc.paths['/health'].get.responses['503'], 'not on routes without a store');
});

/** a fresh dispatcher over the setup's stores, with the ids of the jobs it enqueues, in order */
const spiedDispatcher = (s: Awaited<ReturnType<typeof setup>>) => {
  const queue = createInProcessJobQueue({ ackWaitMs: 60_000, maxDeliver: 3, dedupeWindowMs: 60_000 });
  const enqueued: string[] = [];
  const spied = {
    ...queue,
    enqueue: (m: Parameters<typeof queue.enqueue>[0]) => {
      enqueued.push(m.jobId);
      return queue.enqueue(m);
    },
  };
  const dispatcher = createDispatcher({
    eventStore: s.store,
    readModels: s.readModels,
    queue: spied,
    handle: s.handle,
    settings: loadConfig({}),
  });
  return { dispatcher, queue, enqueued };
};

t.test('dispatcher › catching up from scratch skips a job that already finished', async (t) => {
  const s = await setup(t);
  const open = await s.searches.submit(s.doc, SearchRequest.parse({ keyword: 'still open' }), {});
  const done = await s.searches.submit(s.doc, SearchRequest.parse({ keyword: 'finished' }), {});
  const stream = streams.searchJob(done.jobId);
  const now = new Date().toISOString();
  await s.handle(stream, searchJobDecider, { type: 'StartCrawl', jobId: done.jobId, attempt: 1, worker: 'w', now });
  const failed = await s.handle(stream, searchJobDecider, {
    type: 'FailCrawl',
    jobId: done.jobId,
    attempt: 1,
    reason: 'blocked',
    failure: { code: 'SERP_CRAWL_BLOCKED', kind: 'captcha' },
    final: true,
    now,
  });
  await s.projector.waitFor(failed.position ?? 0);
  // a fresh dispatcher: its checkpoint is 0, so it replays every SearchSubmitted in the log
  const { dispatcher, queue, enqueued } = spiedDispatcher(s);
  await dispatcher.start();
  const deadline = Date.now() + 5_000;
  while (s.readModels.checkpoint('dispatcher') < (failed.position ?? 0) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  await dispatcher.stop();
  await queue.close();
  t.ok(enqueued.includes(open.jobId), 'the open job is dispatched');
  t.notOk(enqueued.includes(done.jobId), 'the finished one is not handed to a crawler again');
});

t.test('dispatcher › live jobs are dispatched, and a stop records how far it got', async (t) => {
  const s = await setup(t);
  const { dispatcher, queue, enqueued } = spiedDispatcher(s);
  await dispatcher.start();
  // submitted after the start: live events, checkpointed at most once a second while running
  const jobs = [];
  for (const keyword of ['one', 'two', 'three']) {
    jobs.push((await s.searches.submit(s.doc, SearchRequest.parse({ keyword }), {})).jobId);
  }
  const deadline = Date.now() + 5_000;
  while (enqueued.length < jobs.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.same(enqueued, jobs, 'each live job is handed to the queue, in order');
  await dispatcher.stop();
  await queue.close();
  t.equal(
    s.readModels.checkpoint('dispatcher'),
    await s.store.headPosition(),
    'stop writes the checkpoint of the last event handled, so a restart does not replay them',
  );
});
