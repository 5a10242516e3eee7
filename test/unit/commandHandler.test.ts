import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { streams } from '../../contracts/events.js';
import { usageDecider, usedOf } from '../../domain/usage/usage.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createCommandHandler } from '../../services/application/commandHandler.js';

const now = '2026-11-21T10:00:00.000Z';
const stream = streams.usage('k1', '202611');
const reserve = (jobId: string, monthlyQuota: number) =>
  ({ type: 'ReserveQuota', keyId: 'k1', month: '202611', jobId, monthlyQuota, now }) as const;
const release = (jobId: string) =>
  ({ type: 'ReleaseQuota', keyId: 'k1', month: '202611', jobId, reason: 'test', now }) as const;

const openStore = (t: Test) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-handler-'));
  const store = createSqliteEventStore({ path: join(dir, 'events.db') });
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
};

/** the store, with a count of its readStream calls */
const countingReads = (store: ReturnType<typeof createSqliteEventStore>) => {
  const counting = {
    reads: 0,
    store: {
      ...store,
      readStream: (...args: Parameters<typeof store.readStream>) => {
        counting.reads += 1;
        return store.readStream(...args);
      },
    },
  };
  return counting;
};

const usedIn = async (store: ReturnType<typeof createSqliteEventStore>) => {
  const { events } = await store.readStream(stream);
  return usedOf(
    events.reduce(
      (s, e) => usageDecider.evolve(s, { type: e.type, data: e.data } as never),
      usageDecider.initialState(),
    ),
  );
};

t.test('CommandHandler › a burst on one stream is decided in order and appended in few writes', async (t) => {
  const store = openStore(t);
  const handle = createCommandHandler(store);
  const results = await Promise.allSettled(
    Array.from({ length: 200 }, (_, i) => handle(stream, usageDecider, reserve(`j${i}`, 50))),
  );
  const ok = results.filter((r) => r.status === 'fulfilled');
  const refused = results.filter((r) => r.status === 'rejected');
  t.equal(ok.length, 50, 'exactly the quota is reserved');
  t.equal(refused.length, 150);
  t.ok(
    refused.every((r) => (r as PromiseRejectedResult).reason?.code === 'SERP_QUOTA_EXCEEDED'),
    'each refusal is its own quota error, the batch is not failed for it',
  );
  t.same(
    results.slice(0, 50).map((r) => r.status),
    Array(50).fill('fulfilled'),
    'first come, first served: the first 50 submitted are the 50 reserved',
  );
  t.equal(await usedIn(store), 50, 'the log holds exactly 50 reservations');
  const { appends } = store.stats();
  t.ok(appends < 10, `the 50 reservations took ${appends} appends, not 50`);
  const positions = ok.map((r) => (r as PromiseFulfilledResult<{ position?: number }>).value.position ?? 0);
  t.ok(
    positions.every((p) => p > 0),
    'each accepted command reports the position of the append that holds it (for read-your-writes)',
  );
});

t.test('CommandHandler › a decision sees what another process appended since the cached state', async (t) => {
  const store = openStore(t);
  const a = createCommandHandler(store);
  const b = createCommandHandler(store); // another process on the same log
  await a(stream, usageDecider, reserve('j1', 10));
  await b(stream, usageDecider, reserve('j2', 10));
  const released = await a(stream, usageDecider, release('j2'));
  t.equal(released.events.length, 1, 'a releases j2, which only b had reserved: its fold caught up first');
  const again = await b(stream, usageDecider, release('j2'));
  t.same(again.events, [], 'b sees a’s release and decides nothing');
  t.equal(await usedIn(store), 1);
});

t.test('CommandHandler › two handlers racing on one stream never overshoot the quota', async (t) => {
  const store = openStore(t);
  const a = createCommandHandler(store);
  const b = createCommandHandler(store);
  const results = await Promise.allSettled(
    Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b)(stream, usageDecider, reserve(`j${i}`, 30))),
  );
  t.equal(results.filter((r) => r.status === 'fulfilled').length, 30, 'version conflicts are retried, not lost');
  t.equal(await usedIn(store), 30);
});

t.test('CommandHandler › an event store error reaches the caller as a rejection', async (t) => {
  const store = openStore(t);
  const handle = createCommandHandler(store);
  await handle(stream, usageDecider, reserve('j1', 10));
  await store.close();
  await t.rejects(handle(stream, usageDecider, reserve('j2', 10)), 'the store’s error reaches the caller');
});

t.test(
  'CommandHandler › a stream the caller says is new is decided without a read, and a wrong hint costs a retry',
  async (t) => {
    const store = openStore(t);
    const counting = countingReads(store);
    const handle = createCommandHandler(counting.store);
    await handle(stream, usageDecider, reserve('j1', 10), { newStream: true });
    t.equal(counting.reads, 0, 'a new stream: no read before the decision');
    t.equal(await usedIn(store), 1);

    // the hint is wrong (the stream exists, written by another process): the append conflicts, the handler reads the
    // stream and decides again on what is there
    const other = createCommandHandler(store);
    const other2 = streams.usage('k2', '202611');
    await other(other2, usageDecider, { ...reserve('x1', 1), keyId: 'k2' });
    counting.reads = 0;
    await t.rejects(
      handle(other2, usageDecider, { ...reserve('x2', 1), keyId: 'k2' }, { newStream: true }),
      { code: 'SERP_QUOTA_EXCEEDED' },
      'the decision saw the existing reservation: the quota of 1 is taken',
    );
    t.ok(counting.reads >= 1, 'the conflict read the stream');
  },
);

t.test(
  'CommandHandler › past its budget of cached states a stream is folded from the log again, never wrongly',
  async (t) => {
    const store = openStore(t);
    const counting = countingReads(store);
    const handle = createCommandHandler(counting.store, { cachedStreams: 4 });
    const usage = (k: string) => streams.usage(k, '202611');
    const reserveOn = (k: string, jobId: string, quota: number) => ({ ...reserve(jobId, quota), keyId: k });
    await handle(usage('a'), usageDecider, reserveOn('a', 'a1', 2));
    await handle(usage('b'), usageDecider, reserveOn('b', 'b1', 2));
    counting.reads = 0;
    await handle(usage('a'), usageDecider, reserveOn('a', 'a2', 2));
    t.equal(counting.reads, 1, 'a cached stream: one read of what came after its state (nothing)');
    // six more streams push `a` out of both generations
    for (const k of ['c', 'd', 'e', 'f', 'g', 'h']) await handle(usage(k), usageDecider, reserveOn(k, `${k}1`, 2));
    counting.reads = 0;
    await t.rejects(
      handle(usage('a'), usageDecider, reserveOn('a', 'a3', 2)),
      { code: 'SERP_QUOTA_EXCEEDED' },
      'folded again from the log: both reservations are seen',
    );
    t.equal(counting.reads, 1);
    // `b` read back from the older generation still decides on its whole stream
    await handle(usage('b'), usageDecider, reserveOn('b', 'b2', 2));
    await t.rejects(handle(usage('b'), usageDecider, reserveOn('b', 'b3', 2)), { code: 'SERP_QUOTA_EXCEEDED' });
  },
);
