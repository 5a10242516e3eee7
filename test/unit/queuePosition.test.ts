import t, { type Test } from 'tap';
import { streams } from '../../contracts/events.js';
import { SearchRequest } from '../../contracts/search.js';
import { searchJobDecider } from '../../domain/searchJob/searchJob.js';
import { composeApplication } from '../../services/compose/application.js';
import { openCore } from '../../services/compose/embedded/core.js';
import { loadConfig } from '../../services/config/config.js';
import { createQueuePositions } from '../../services/fairShare/queuePosition.js';
import { removeDir, tempDataDir } from '../support/service.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** polls a condition (the positions follow the log on their own): a bound, not a sleep as synchronisation */
const until = async (what: string, condition: () => boolean, limitMs = 10_000) => {
  const deadline = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
};

const T0 = Date.parse('2026-12-07T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Queue positions (services/fairShare/queuePosition.ts) over a real embedded core (SQLite log and read models): the
 * test submits searches through the application and records the crawls' starts and ends as the crawl worker does, at
 * times it chooses, and reads the positions at a clock it sets. No crawler runs: what is waiting and crawling is the
 * test's doing alone.
 */
const setup = async (t: Test, laneSlots = 2) => {
  const dir = tempDataDir('queue-position');
  const config = loadConfig({ SERP_CACHE_TTL_S: '0' }, { dataDir: dir });
  const core = await openCore(config);
  const { keys, searches } = composeApplication(core, config);
  let clock = T0;
  const positions = createQueuePositions({
    ...core,
    laneMinShare: config.laneMinShare,
    laneSlots,
    fleet: { routes: [{ route: 'direct' }], since: iso(T0 - 60_000) },
    now: () => clock,
  });
  await positions.start();
  t.teardown(async () => {
    await positions.stop();
    await core.close();
    removeDir(dir);
  });
  const keyOf = async (tier: string) => {
    const created = await keys.create({ tier });
    await core.projector.waitFor(await core.eventStore.headPosition());
    return core.queries.keys.byId(created.keyId)!;
  };
  let n = 0;
  let followed = 0;
  /** a search, once the positions followed its submit */
  const submit = async (key: Awaited<ReturnType<typeof keyOf>>, depth: number, priority: 'live' | 'bulk' = 'live') => {
    const { jobId } = await searches.submit(
      key,
      SearchRequest.parse({ keyword: `k${n++}`, depth }),
      {},
      undefined,
      priority,
    );
    followed += 1;
    const lane = priority;
    await until('the submit followed', () => {
      const c = positions.counts()[lane];
      return positions.of(jobId) !== undefined || c.waiting + c.crawling >= followed;
    });
    return jobId;
  };
  const start = async (jobId: string, at: number) => {
    await core.handle(streams.searchJob(jobId), searchJobDecider, {
      type: 'StartCrawl',
      jobId,
      attempt: 1,
      worker: 'test',
      now: iso(at),
    });
    await until(
      'the start followed',
      () => positions.of(jobId)?.ahead === 0 && positions.of(jobId)?.estimated_start_s === 0,
    );
  };
  /** the crawl ends done at `at`, having fetched `pages` pages */
  const complete = async (jobId: string, at: number, pages: number) => {
    await core.handle(streams.searchJob(jobId), searchJobDecider, {
      type: 'CompleteCrawl',
      jobId,
      status: 'done',
      pages: Array.from({ length: pages }, (_, i) => ({
        start: i * 10,
        url: `https://www.google.com/search?start=${i * 10}`,
        status: 200,
        fetchedAt: iso(at),
        organicCount: 10,
        fetcher: 'http',
      })),
      resultRef: { key: `results/${jobId}.json`, sha256: 'r', bytes: 2 },
      rawHtmlRef: { key: `raw/${jobId}.html`, sha256: 'h', bytes: 1 },
      parserVersion: '1',
      blocks: 0,
      now: iso(at),
    });
    await until('the end followed', () => positions.of(jobId) === undefined);
  };
  return {
    positions,
    keyOf,
    submit,
    start,
    complete,
    setClock: (ms: number) => {
      clock = ms;
    },
  };
};

t.test('queue position › ahead', async (t) => {
  t.test('the first job of an idle lane has nothing ahead and starts now', async (t) => {
    const s = await setup(t);
    const a = await s.keyOf('enterprise');
    const job = await s.submit(a, 10);
    // the 202 asks after the submit: this process has usually followed it by then, and the job is not behind itself
    t.same(s.positions.ofNew(job, 'live', a.keyId, 8), { lane: 'live', ahead: 0, estimated_start_s: 0 }, 'the 202');
    t.same(s.positions.of(job), { lane: 'live', ahead: 0, estimated_start_s: 0 }, 'and its polls');
    t.same(
      s.positions.ofNew('0'.repeat(24), 'live', 'another', 1),
      { lane: 'live', ahead: 0, estimated_start_s: 0 },
      'a job not yet followed of a key with nothing in the lane: nothing ahead either',
    );
  });

  t.test('behind earlier jobs of other keys, only those the fair order starts first count', async (t) => {
    const s = await setup(t);
    const a = await s.keyOf('free');
    const b = await s.keyOf('free');
    const p = await s.keyOf('pro');
    // every key has a job out, so none goes express
    for (const k of [a, b, p]) await s.start(await s.submit(k, 10), T0);
    for (let i = 0; i < 5; i++) await s.submit(a, 10);
    const b1 = await s.submit(b, 10);
    const b2 = await s.submit(b, 10);
    const b3 = await s.submit(b, 10);
    t.equal(s.positions.of(b1)?.ahead, 1, "B's first waiting job: behind A's first only, not all five of A's");
    t.equal(s.positions.of(b2)?.ahead, 3, "B's second: A's first two and B's first");
    t.equal(s.positions.of(b3)?.ahead, 5, "B's third: A's first three and B's first two");
    const p1 = await s.submit(p, 10);
    const p4 = [await s.submit(p, 10), await s.submit(p, 10), await s.submit(p, 10)][2]!;
    t.equal(s.positions.of(p1)?.ahead, 2, "a share-4 key's first: A's and B's first");
    t.equal(s.positions.of(p4)?.ahead, 5, "its fourth: its own three, and A's and B's first (4 pages to their 1)");
  });
});

t.test('queue position › the estimate from the lane’s recent pace', async (t) => {
  t.test('jobs ahead take the slots as the crawls under way end at the pace the lane had lately', async (t) => {
    const s = await setup(t, 2);
    const a = await s.keyOf('enterprise');
    const jobs: string[] = [];
    for (let i = 0; i < 8; i++) jobs.push(await s.submit(a, 100, 'bulk'));
    s.setClock(T0 + 1000);
    t.same(s.positions.of(jobs[1]!), { lane: 'bulk', ahead: 1, estimated_start_s: 0 }, 'a free slot for it: now');
    await s.start(jobs[0]!, T0);
    await s.start(jobs[1]!, T0);
    s.setClock(T0 + 2000);
    t.equal(
      s.positions.of(jobs[3]!)?.estimated_start_s,
      null,
      'both slots busy, no crawl ended and no capacity measured: no estimate rather than a made-up one',
    );
    // two crawls of 10 pages each in 10 s: a page a second
    await s.complete(jobs[0]!, T0 + 10_000, 10);
    await s.complete(jobs[1]!, T0 + 10_000, 10);
    await s.start(jobs[2]!, T0 + 10_000);
    await s.start(jobs[3]!, T0 + 10_000);
    s.setClock(T0 + 14_000);
    const eta = (i: number) => s.positions.of(jobs[i]!)?.estimated_start_s;
    t.equal(s.positions.of(jobs[4]!)?.ahead, 0, 'the next of the key has nothing ahead');
    t.equal(eta(4), 6, 'but both slots are busy: it starts when the first crawl under way ends, 6 s from now');
    t.equal(eta(5), 6, 'the next one in the other slot');
    t.equal(eta(6), 16, 'then each slot again after a crawl of 10 s');
    t.equal(eta(7), 16, 'and the last of the backlog too');
    // the lane slows down: the crawls that ended in the last minute are what counts
    await s.complete(jobs[2]!, T0 + 90_000, 10);
    await s.complete(jobs[3]!, T0 + 90_000, 10);
    await s.start(jobs[4]!, T0 + 90_000);
    await s.start(jobs[5]!, T0 + 90_000);
    s.setClock(T0 + 90_000);
    t.equal(eta(6), 80, 'the last crawls took 80 s: 8 s a page, the minute before no longer counts');
  });

  t.test(
    'a higher lane with pages waiting holds a lower lane up: they go first at the fleet’s recent pace',
    async (t) => {
      const s = await setup(t, 1);
      const a = await s.keyOf('enterprise');
      const jobs: string[] = [];
      for (let i = 0; i < 3; i++) jobs.push(await s.submit(a, 100, 'bulk'));
      await s.start(jobs[0]!, T0);
      // a page a second, the lane's and the fleet's
      await s.complete(jobs[0]!, T0 + 10_000, 10);
      await s.start(jobs[1]!, T0 + 10_000);
      s.setClock(T0 + 12_000);
      t.equal(s.positions.of(jobs[2]!)?.estimated_start_s, 8, 'the bulk lane alone: when its crawl under way ends');
      const l = await s.keyOf('enterprise');
      await s.submit(l, 100, 'live');
      await s.submit(l, 100, 'live');
      t.equal(
        s.positions.of(jobs[2]!)?.estimated_start_s,
        26,
        "two top-100 live searches waiting: their 20 pages first, at a page a second less bulk's 10 % share",
      );
    },
  );

  t.test('a key of its own gets the express slot whatever the lane’s backlog', async (t) => {
    const s = await setup(t, 1);
    const a = await s.keyOf('enterprise');
    const b = await s.keyOf('enterprise');
    for (let i = 0; i < 4; i++) await s.submit(a, 100, 'bulk');
    const mine = await s.submit(b, 10, 'bulk');
    t.same(s.positions.of(mine), { lane: 'bulk', ahead: 0, estimated_start_s: 0 }, 'another key’s first job: now');
  });
});
