import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { encode } from '../../services/adapters/eventStore/sqliteCodec.js';
import type { WriteRequest } from '../../services/adapters/eventStore/sqliteWriter.js';
import { type RecordedEvent, WrongExpectedVersionError } from '../../services/ports/eventStore.js';
import { packGroup, startWriterThread, unpackGroup } from '../../services/threads/writerThread.js';
import { type EventStoreFixture, eventStoreConformance } from './eventStoreSuite.js';

/** the group commits on a thread of their own (what `serve` runs), or on the calling thread */
const writerOf = (writerThread: boolean) => (writerThread ? { groupWriter: startWriterThread } : {});

const makeFixture = async (writerThread = false): Promise<EventStoreFixture & { file: string }> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serp-es-'));
  const file = path.join(dir, 'events.db');
  return {
    file,
    connect: async () => createSqliteEventStore({ path: file, pollIntervalMs: 50, ...writerOf(writerThread) }),
    cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
};

/** two stores on one file, as the HTTP thread's and the pipeline thread's are, closed with the test */
const twoStores = async (t: Test, pollIntervalMs: number) => {
  const fixture = await makeFixture();
  const mine = createSqliteEventStore({ path: fixture.file, pollIntervalMs });
  const other = createSqliteEventStore({ path: fixture.file, pollIntervalMs });
  t.teardown(async () => {
    await mine.close();
    await other.close();
    await fixture.cleanup();
  });
  return { mine, other };
};

t.test('SqliteEventStore › conformance', async (t) => eventStoreConformance(t, () => makeFixture(false)));
// what `serve` runs: the group commits on a thread of their own
t.test('SqliteEventStore (writer thread) › conformance', async (t) =>
  eventStoreConformance(t, () => makeFixture(true)),
);

for (const writerThread of [false, true]) {
  t.test(`SqliteEventStore${writerThread ? ' (writer thread)' : ''} › group commit`, async (t) => {
    const fixture = await makeFixture();
    const store = createSqliteEventStore({ path: fixture.file, ...writerOf(writerThread) });
    t.teardown(async () => {
      await store.close();
      await fixture.cleanup();
    });

    await t.test('200 concurrent appends to 200 streams share a handful of commits', async (t) => {
      const before = store.stats();
      await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          store.appendToStream(`many-${i}`, [{ type: 'A', data: {} }], { expectedVersion: 'no_stream' }),
        ),
      );
      const after = store.stats();
      t.equal(after.appends - before.appends, 200);
      t.ok(after.commits - before.commits <= 5, `${after.commits - before.commits} commits for 200 appends`);
    });

    await t.test('a conflicting append fails alone, the rest of its batch commits', async (t) => {
      await store.appendToStream('taken', [{ type: 'A', data: {} }]);
      const before = store.stats();
      const outcomes = await Promise.allSettled([
        store.appendToStream('ok-1', [{ type: 'A', data: {} }], { expectedVersion: 'no_stream' }),
        store.appendToStream('taken', [{ type: 'B', data: {} }], { expectedVersion: 'no_stream' }),
        store.appendToStream('ok-2', [{ type: 'A', data: {} }], { expectedVersion: 'no_stream' }),
      ]);
      t.equal(store.stats().commits - before.commits, 1, 'all three went through one commit');
      t.same(
        outcomes.map((o) => o.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      t.type((outcomes[1] as PromiseRejectedResult).reason, WrongExpectedVersionError);
      t.equal((await store.readStream('ok-2')).events.length, 1);
      t.equal((await store.readStream('taken')).events.length, 1, 'the conflicting event was rolled back');
    });

    await t.test('an event that cannot be serialised fails its own append only', async (t) => {
      const bad = store.appendToStream('bad', [{ type: 'A', data: undefined }]);
      const good = store.appendToStream('good', [{ type: 'A', data: 1 }]);
      await t.rejects(bad, TypeError);
      t.equal((await good).nextExpectedVersion, 0);
    });

    await t.test('a burst of 2,500 appends goes out as a few bounded commits, every one acknowledged', async (t) => {
      const before = store.stats();
      const results = await Promise.all(
        Array.from({ length: 2500 }, (_, i) => store.appendToStream(`burst-${i}`, [{ type: 'A', data: { i } }])),
      );
      const commits = store.stats().commits - before.commits;
      t.ok(commits >= 3 && commits <= 10, `${commits} commits of at most 1,000 appends`);
      t.equal(new Set(results.map((r) => r.lastGlobalPosition)).size, 2500, 'each its own position');
    });
  });
}

t.test('SqliteEventStore › stored JSON is validated on read', async (t) => {
  const fixture = await makeFixture();
  const store = createSqliteEventStore({ path: fixture.file });
  t.teardown(async () => {
    await store.close();
    await fixture.cleanup();
  });
  await store.appendToStream('fine', [{ type: 'A', data: {} }]);
  const raw = new Database(fixture.file);
  raw.prepare("INSERT INTO events (stream, version, type, data, metadata) VALUES ('broken', 0, 'A', '{}', '{}')").run();
  raw.close();
  await t.rejects(store.readStream('broken'), { code: 'SERP_EVENTSTORE_CORRUPT_EVENT', globalPosition: 2 });
  await t.rejects(store.readAll(), { code: 'SERP_EVENTSTORE_CORRUPT_EVENT' });
  t.equal((await store.readStream('fine')).events.length, 1, 'valid streams still read');
});

t.test('SqliteEventStore › subscriptions read recent commits from memory, gaps from the file', async (t) => {
  const { mine, other } = await twoStores(t, 20);
  const seen: unknown[] = [];
  const sub = mine.subscribeToAll(0, (events) => {
    seen.push(...events);
  });
  const until = async (n: number) => {
    for (let i = 0; i < 200 && seen.length < n; i++) await new Promise((r) => setTimeout(r, 10));
  };
  // mine, then another process, then mine again: the tail restarts after the other's event
  await mine.appendToStream('s-1', [{ type: 'Mine', data: { n: 1, nested: { a: [1, 2] } } }]);
  await until(1);
  await other.appendToStream('s-2', [{ type: 'Other', data: { n: 2 } }]);
  await mine.appendToStream('s-1', [
    { type: 'Mine', data: { n: 3 }, metadata: { correlationId: 'c-1' } },
    { type: 'Mine', data: { n: 4 } },
  ]);
  await until(4);
  await sub.stop();
  const fromFile = await mine.readAll();
  t.same(seen, fromFile, 'the same events, in the same order and shape, as a read of the file');
  t.same(
    seen.map((e) => (e as { globalPosition: number }).globalPosition),
    [1, 2, 3, 4],
  );
  const stats = mine.stats();
  t.ok(stats.tailReads > 0, `${stats.tailReads} reads answered from memory`);
  t.ok(stats.fileReads > 0, `${stats.fileReads} reads of the file (the other process's event, and idle polls)`);
});

t.test('SqliteEventStore › a group crosses to the writer thread as one string, and back the same', async (t) => {
  const batch: WriteRequest[] = [
    {
      stream: 'searchJob-1',
      expected: 'no_stream',
      events: [encode({ type: 'A', data: { text: 'nul \u0000 and tab \t and "quotes"', n: [1, 2] } })],
    },
    { stream: 'usage-k-202611', expected: 41, events: [] },
    { stream: 'x', expected: -1, events: [encode({ type: 'B', data: 'é' }), encode({ type: 'C', data: null })] },
    { stream: 'y', expected: 'stream_exists', events: [encode({ type: 'D', data: {} })] },
    { stream: 'z', expected: 'any', events: [encode({ type: 'E', data: 1 })] },
  ];
  const packed = packGroup(batch);
  t.type(packed, 'string');
  t.same(unpackGroup(packed as string), batch);
  t.equal(
    packGroup([{ stream: 'a\u0000b', expected: 'any', events: [] }]),
    undefined,
    'a NUL in a name: sent as objects',
  );
  t.equal(
    packGroup([{ stream: 'a', expected: 'any', events: [{ type: 'T\u0000', data: '1', metadata: '{}' }] }]),
    undefined,
  );

  const fixture = await makeFixture();
  const store = createSqliteEventStore({ path: fixture.file, ...writerOf(true) });
  t.teardown(async () => {
    await store.close();
    await fixture.cleanup();
  });
  await store.appendToStream('odd\u0000name', [{ type: 'A', data: { ok: true } }]);
  t.same(
    (await store.readStream('odd\u0000name')).events.map((e) => e.data),
    [{ ok: true }],
    'the objects path works too',
  );
});

t.test('SqliteEventStore › a subscription at the tail asks the file only once per half poll interval', async (t) => {
  const { mine: store, other } = await twoStores(t, 60_000);
  const seen: number[] = [];
  const sub = store.subscribeToAll(0, (events) => {
    for (const e of events) seen.push(e.globalPosition);
  });
  const until = async (n: number) => {
    for (let i = 0; i < 300 && seen.length < n; i++) await new Promise((r) => setTimeout(r, 10));
  };
  await until(0);
  const before = store.stats().fileReads;
  for (let i = 0; i < 20; i++) {
    await store.appendToStream(`tail-${i}`, [{ type: 'A', data: { i } }]);
    await until(i + 1);
  }
  t.same(
    seen,
    Array.from({ length: 20 }, (_, i) => i + 1),
    'every event delivered, from memory',
  );
  t.ok(
    store.stats().fileReads - before <= 1,
    `${store.stats().fileReads - before} file reads for 20 batches (one per batch before)`,
  );
  // another process's event is not in the tail: this process's next commit leaves a gap, and the file fills it
  await other.appendToStream('elsewhere', [{ type: 'B', data: {} }]);
  await store.appendToStream('tail-20', [{ type: 'A', data: {} }]);
  await until(22);
  t.same(seen.slice(-2), [21, 22], "the other process's event arrives in order, read from the file");
  await sub.stop();
});

t.test('SqliteEventStore › what one subscription read from the file, the others take from memory', async (t) => {
  // the pipeline thread's store: the HTTP thread (here `other`) writes, several subscriptions read every event
  const { mine: store, other } = await twoStores(t, 60_000);
  const seen: RecordedEvent[][] = [[], [], []];
  const subs = seen.map((into) =>
    store.subscribeToAll(0, (events) => {
      into.push(...events);
    }),
  );
  const until = async (n: number) => {
    for (let i = 0; i < 300 && seen.some((s) => s.length < n); i++) await new Promise((r) => setTimeout(r, 10));
  };
  await until(0);
  const before = store.stats().fileReads;
  for (let i = 0; i < 10; i++) {
    const { lastGlobalPosition } = await other.appendToStream(`elsewhere-${i}`, [
      { type: 'A', data: { i } },
      { type: 'B', data: { i } },
    ]);
    store.appendedElsewhere(lastGlobalPosition);
    await until(2 * (i + 1));
  }
  // this store's own commit after them continues the tail
  await store.appendToStream('mine', [{ type: 'C', data: {} }]);
  await until(21);
  for (const s of subs) await s.stop();
  t.same(
    seen[0]!.map((e) => e.globalPosition),
    Array.from({ length: 21 }, (_, i) => i + 1),
    'every event, in order',
  );
  t.same(seen[0], await store.readAll(), 'the same events as a read of the file');
  t.ok(
    seen[1]!.every((e, i) => e === seen[0]![i]) && seen[2]!.every((e, i) => e === seen[0]![i]),
    'the three subscriptions were handed the same objects',
  );
  const fileReads = store.stats().fileReads - before;
  t.ok(
    fileReads <= 10,
    `${fileReads} file reads for 10 commits elsewhere and 3 subscriptions (60 when each read the file itself)`,
  );
});

// the pipeline thread (pipelineThread.ts): two connections to one file on two threads, each telling the other what it
// committed, so that neither side's subscriptions wait for their poll to see the other's appends
t.test(
  'SqliteEventStore › onCommitted and appendedElsewhere: another connection’s append is read at once',
  async (t) => {
    const fixture = await makeFixture();
    const committed: number[] = [];
    // a poll so slow that only the wake can explain a prompt delivery
    const here = createSqliteEventStore({ path: fixture.file, pollIntervalMs: 60_000 });
    const there = createSqliteEventStore({
      path: fixture.file,
      pollIntervalMs: 60_000,
      onCommitted: (position) => committed.push(position),
    });
    t.teardown(async () => {
      await here.close();
      await there.close();
      await fixture.cleanup();
    });
    const seen: string[] = [];
    let arrived: () => void = () => undefined;
    const sub = here.subscribeToAll(0, (events) => {
      for (const e of events) seen.push(`${e.globalPosition}:${e.type}`);
      if (seen.length >= 3) arrived();
    });
    t.teardown(() => sub.stop());
    // the subscription has read the (empty) file once and now sleeps on its 60 s poll
    await new Promise((r) => setTimeout(r, 100));
    await there.appendToStream('s-1', [{ type: 'A', data: {} }]);
    const last = (
      await there.appendToStream('s-2', [
        { type: 'B', data: {} },
        { type: 'C', data: {} },
      ])
    ).lastGlobalPosition;
    t.same(committed, [1, 3], 'each commit reports its last position');
    t.equal(last, 3);
    await new Promise((r) => setTimeout(r, 200));
    t.same(seen, [], 'not told: the other connection’s appends wait for the poll');
    const started = Date.now();
    const got = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    here.appendedElsewhere(last);
    await got;
    t.ok(Date.now() - started < 1_000, `delivered ${Date.now() - started} ms after the wake`);
    t.same(seen, ['1:A', '2:B', '3:C'], 'in order, once each');
    // an older position, or the same again, wakes nothing new and repeats nothing
    here.appendedElsewhere(2);
    here.appendedElsewhere(3);
    await new Promise((r) => setTimeout(r, 100));
    t.same(seen, ['1:A', '2:B', '3:C']);
    // its own appends still come from its tail, interleaved with the other's by position
    await here.appendToStream('s-3', [{ type: 'D', data: {} }]);
    await new Promise((r) => setTimeout(r, 100));
    t.same(seen, ['1:A', '2:B', '3:C', '4:D']);
  },
);
