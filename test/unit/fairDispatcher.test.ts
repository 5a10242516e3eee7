import t, { type Test } from 'tap';
import { streams } from '../../contracts/events.js';
import type { JobMessage } from '../../contracts/jobMessage.js';
import type { Lane } from '../../contracts/lanes.js';
import { SearchRequest } from '../../contracts/search.js';
import { searchJobDecider } from '../../domain/searchJob/searchJob.js';
import { createInProcessJobQueue } from '../../services/adapters/jobQueue/inProcess.js';
import { composeApplication } from '../../services/compose/application.js';
import { openCore } from '../../services/compose/embedded/core.js';
import { loadConfig } from '../../services/config/config.js';
import { createDispatcher } from '../../services/dispatcher/dispatcher.js';
import type { Delivery, JobQueue } from '../../services/ports/jobQueue.js';
import { removeDir, tempDataDir } from '../support/service.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = async (what: string, condition: () => boolean, limitMs = 10_000) => {
  const deadline = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
};

/**
 * The fair dispatcher over a real embedded core (SQLite log and read models, the projector) and the in-process
 * queue. The crawlers are a consumer the test drives: it records each delivery and starts a job (CrawlStarted) when
 * the test says, so what sits on the queue and in which order is the dispatcher's doing alone.
 */
const setup = async (t: Test, settings: { fairShare?: boolean; queueAhead?: number } = {}) => {
  const dir = tempDataDir('fair-dispatcher');
  // the shipped tiers' shares: free 1, pro 4 (and enterprise 8, where every key of a test is enterprise)
  const config = loadConfig({ SERP_CACHE_TTL_S: '0' }, { dataDir: dir });
  const core = await openCore(config);
  const { keys, searches } = composeApplication(core, config);
  const queues: JobQueue[] = [];
  const dispatchers: Array<{ stop(): Promise<void> }> = [];
  /** the consumers hold every delivery until the test ends */
  let release: () => void = () => {};
  const released = new Promise<void>((r) => {
    release = r;
  });
  t.teardown(async () => {
    for (const d of dispatchers) await d.stop();
    release();
    for (const q of queues) await q.close();
    await core.close();
    removeDir(dir);
  });
  const keyOf = async (tier: string) => {
    const created = await keys.create({ tier });
    await core.projector.waitFor(await core.eventStore.headPosition());
    return core.queries.keys.byId(created.keyId)!;
  };
  let n = 0;
  const submit = async (key: Awaited<ReturnType<typeof keyOf>>, priority: 'live' | 'bulk', depth = 100) =>
    (await searches.submit(key, SearchRequest.parse({ keyword: `k${n++}`, depth }), {}, undefined, priority)).jobId;
  /** a dispatcher on a fresh queue, whose consumer holds every delivery until `start` is called for it */
  const life = async () => {
    const queue = createInProcessJobQueue({ ackWaitMs: 60_000, maxDeliver: 5, dedupeWindowMs: 60_000 });
    queues.push(queue);
    const held: Delivery[] = [];
    const delivered: JobMessage[] = [];
    queue.consume(
      async (d) => {
        held.push(d);
        delivered.push(d.message);
        await released;
      },
      { concurrency: 1000 },
    );
    const dispatcher = createDispatcher({
      eventStore: core.eventStore,
      readModels: core.readModels,
      queries: core.queries,
      queue,
      handle: core.handle,
      projected: (p) => core.projector.waitFor(p),
      settings: { ...config, ...settings },
    });
    dispatchers.push(dispatcher);
    await dispatcher.start();
    /** a crawler takes the job: CrawlStarted, as the crawl worker records it */
    const start = async (jobId: string) => {
      await core.handle(streams.searchJob(jobId), searchJobDecider, {
        type: 'StartCrawl',
        jobId,
        attempt: 1,
        worker: 'test',
        now: new Date().toISOString(),
      });
    };
    const finish = async (jobId: string) => {
      await core.handle(streams.searchJob(jobId), searchJobDecider, {
        type: 'FailCrawl',
        jobId,
        attempt: 1,
        reason: 'test',
        failure: { code: 'SERP_CRAWL_UNEXPECTED' },
        final: true,
        now: new Date().toISOString(),
      });
    };
    return { queue, dispatcher, held, delivered, start, finish };
  };
  return { core, keyOf, submit, life };
};

const laneOfMsg = (m: JobMessage): Lane => m.lane ?? 'live';

t.test('FairDispatcher › the queue holds only what the crawlers can start soon', async (t) => {
  const s = await setup(t, { queueAhead: 2 });
  const a = await s.keyOf('enterprise');
  const run = await s.life();
  for (let i = 0; i < 20; i++) await s.submit(a, 'live');
  await until('the first dispatches', () => run.delivered.length >= 3);
  await sleep(200);
  t.equal(run.delivered.length, 3, "one key's backlog: its first job express, two on the lane's queue, 17 held back");
  t.same(
    run.delivered.map((m) => Boolean(m.first)),
    [true, false, false],
    'the first of the key went to the express class',
  );
  await run.start(run.delivered[1]!.jobId);
  await until('one more once a crawler took one', () => run.delivered.length >= 4);
  await sleep(200);
  t.equal(run.delivered.length, 4, 'each start lets exactly one more go');
});

t.test("FairDispatcher › another key's one search does not wait for a backlog", async (t) => {
  const s = await setup(t, { queueAhead: 2 });
  const a = await s.keyOf('enterprise');
  const b = await s.keyOf('enterprise');
  const run = await s.life();
  const backlog: string[] = [];
  for (let i = 0; i < 30; i++) backlog.push(await s.submit(a, 'live'));
  await until('the backlog dispatched as far as it goes', () => run.delivered.length >= 3);
  // the express slot of A is taken (A's first job is out): B's job goes express the moment it is submitted
  const mine = await s.submit(b, 'live', 10);
  await until("B's job dispatched", () => run.delivered.some((m) => m.jobId === mine));
  t.match(
    run.delivered.find((m) => m.jobId === mine),
    { first: true, lane: 'live' },
    'express, at once',
  );
  // a second job of B waits its fair turn: before most of A's backlog
  for (const m of run.delivered) await run.start(m.jobId);
  const second = await s.submit(b, 'live', 10);
  const order: string[] = [];
  for (let i = 0; i < 6; i++) {
    const before = run.delivered.length;
    await until('a dispatch', () => run.delivered.length > before || run.delivered.some((m) => m.jobId === second));
    const m = run.delivered[run.delivered.length - 1]!;
    order.push(m.jobId);
    if (m.jobId === second) break;
    await run.start(m.jobId);
  }
  t.ok(order.includes(second), `B's second job went within ${order.length} dispatches, not behind A's 27 others`);
  t.ok(order.length <= 4, `fair turn: ${order.length} dispatches before it`);
});

t.test('FairDispatcher › lanes have queues of their own', async (t) => {
  const s = await setup(t, { queueAhead: 1 });
  const a = await s.keyOf('enterprise');
  const b = await s.keyOf('enterprise');
  const run = await s.life();
  for (let i = 0; i < 10; i++) await s.submit(a, 'bulk');
  await until('bulk dispatched as far as it goes', () => run.delivered.length >= 2);
  const live = await s.submit(b, 'live', 10);
  await until('the live job dispatched', () => run.delivered.some((m) => m.jobId === live));
  t.equal(laneOfMsg(run.delivered.find((m) => m.jobId === live)!), 'live');
  t.equal(run.delivered.filter((m) => laneOfMsg(m) === 'bulk').length, 2, 'bulk: its express one and one ahead');
});

t.test("FairDispatcher › a key's share weighs its turns", async (t) => {
  const s = await setup(t, { queueAhead: 1 });
  const free = await s.keyOf('free');
  const pro = await s.keyOf('pro');
  const run = await s.life();
  for (let i = 0; i < 12; i++) await s.submit(free, 'bulk');
  for (let i = 0; i < 12; i++) await s.submit(pro, 'bulk');
  // crawl whatever comes, one start at a time, and count whose jobs the lane's own class handed out
  const seen = new Set<string>();
  const turns: string[] = [];
  for (let i = 0; i < 14; i++) {
    await until('a dispatch', () => run.delivered.some((m) => !seen.has(m.jobId)));
    const m = run.delivered.find((x) => !seen.has(x.jobId))!;
    seen.add(m.jobId);
    if (!m.first) turns.push(m.keyId);
    await run.start(m.jobId);
  }
  const proTurns = turns.filter((k) => k === pro.keyId).length;
  t.ok(
    proTurns >= turns.length * 0.7,
    `the pro key (share 4) got ${proTurns} of ${turns.length} turns against a free key (share 1)`,
  );
});

t.test('FairDispatcher › a restart loses nothing and dispatches nothing twice', async (t) => {
  const s = await setup(t, { queueAhead: 2 });
  const a = await s.keyOf('enterprise');
  const b = await s.keyOf('enterprise');
  const jobs: string[] = [];
  for (let i = 0; i < 8; i++) jobs.push(await s.submit(a, 'live'));
  for (let i = 0; i < 4; i++) jobs.push(await s.submit(b, 'bulk'));
  const first = await s.life();
  await until('dispatches', () => first.delivered.length >= 5);
  // two started, one of them finished; then the dispatcher dies with the in-process queue (a crash)
  await first.start(first.delivered[0]!.jobId);
  await first.start(first.delivered[1]!.jobId);
  await first.finish(first.delivered[1]!.jobId);
  await first.dispatcher.stop();
  await s.core.projector.waitFor(await s.core.eventStore.headPosition());
  const second = await s.life();
  const started = new Set([first.delivered[0]!.jobId, first.delivered[1]!.jobId]);
  const finished = new Set([first.delivered[1]!.jobId]);
  // crawl everything the second life hands out, one at a time, until every job has started
  for (let guard = 0; started.size < jobs.length && guard < 100; guard++) {
    await until('a delivery', () => second.delivered.some((m) => !started.has(m.jobId) || m.dispatch > 0), 5000).catch(
      () => undefined,
    );
    for (const m of second.delivered) {
      if (started.has(m.jobId)) continue;
      started.add(m.jobId);
      await second.start(m.jobId);
    }
  }
  t.same([...started].sort(), [...jobs].sort(), 'every job reached a crawler');
  const fresh = second.delivered.filter((m) => m.dispatch === 0).map((m) => m.jobId);
  t.equal(new Set(fresh).size, fresh.length, 'no job was put on the queue twice');
  t.notOk(
    fresh.some((id) => finished.has(id)),
    'the finished job was not dispatched again',
  );
  t.ok(
    second.delivered.some((m) => m.jobId === first.delivered[0]!.jobId && m.dispatch === 1),
    'the crawl running at the crash went back on the queue (the in-process queue forgot it)',
  );
});

t.test('FairDispatcher › first come first served when fair share is off', async (t) => {
  const s = await setup(t, { fairShare: false });
  const a = await s.keyOf('enterprise');
  const b = await s.keyOf('enterprise');
  const run = await s.life();
  const order: string[] = [];
  for (let i = 0; i < 5; i++) order.push(await s.submit(a, 'bulk'));
  order.push(await s.submit(b, 'live'));
  await until('all dispatched', () => run.delivered.length >= 6);
  t.same(
    run.delivered.map((m) => m.jobId),
    order,
    'in submit order, every job at once',
  );
  t.ok(
    run.delivered.every((m) => m.lane === 'live' && !m.first),
    'one class: the live lane',
  );
});
