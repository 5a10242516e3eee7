import type { Test } from 'tap';
import { type EventStore, WrongExpectedVersionError } from '../../services/ports/eventStore.js';
import { type EventStoreFixture, events, uniqueStream } from './eventStoreHelpers.js';
import { eventStoreSubscriptionConformance } from './eventStoreSubscriptionSuite.js';

export type { EventStoreFixture } from './eventStoreHelpers.js';

/**
 * The one suite every EventStore adapter runs (Emmett's `features.ts` idea). `makeFixture` gives fresh data per
 * test; streams are unique per test and global reads are taken from the head seen at the start, so the suite holds
 * against a shared server too.
 */
export const eventStoreConformance = (t: Test, makeFixture: () => Promise<EventStoreFixture>) => {
  const withStore = async (t: Test, body: (store: EventStore, fixture: EventStoreFixture) => Promise<void>) => {
    const fixture = await makeFixture();
    const store = await fixture.connect();
    t.teardown(async () => {
      await store.close();
      await fixture.cleanup();
    });
    await body(store, fixture);
  };

  t.test('streams › versions are 0-based and the stream reads back in order', (t) =>
    withStore(t, async (store) => {
      const stream = uniqueStream('order');
      const first = await store.appendToStream(stream, events(3), { expectedVersion: 'no_stream' });
      t.equal(first.nextExpectedVersion, 2, 'three events end at version 2');
      const second = await store.appendToStream(stream, events(2, 'Later'), { expectedVersion: 2 });
      t.equal(second.nextExpectedVersion, 4);
      t.ok(second.lastGlobalPosition > first.lastGlobalPosition, 'later append, later global position');

      const read = await store.readStream(stream);
      t.equal(read.currentVersion, 4);
      t.same(
        read.events.map((e) => [e.streamName, e.streamVersion, e.type, e.data]),
        [
          [stream, 0, 'Happened', { i: 0 }],
          [stream, 1, 'Happened', { i: 1 }],
          [stream, 2, 'Happened', { i: 2 }],
          [stream, 3, 'Later', { i: 0 }],
          [stream, 4, 'Later', { i: 1 }],
        ],
      );
      const slice = await store.readStream(stream, { fromVersion: 1, maxCount: 2 });
      t.same(
        slice.events.map((e) => e.streamVersion),
        [1, 2],
        'fromVersion and maxCount slice the stream',
      );
      t.equal(slice.currentVersion, 4, 'a slice still reports the stream version');
    }),
  );

  t.test('streams › a missing stream reads as empty at version -1', (t) =>
    withStore(t, async (store) => {
      t.same(await store.readStream(uniqueStream('missing')), { events: [], currentVersion: -1 });
    }),
  );

  t.test('streams › data survives the round trip', (t) =>
    withStore(t, async (store) => {
      const stream = uniqueStream('data');
      const data = { text: 'zoë ✓ 検索', n: 12.5, nested: { list: [1, null, 'x'], empty: {} }, flag: false };
      await store.appendToStream(stream, [{ type: 'Rich', data }]);
      const [event] = (await store.readStream(stream)).events;
      t.same(event.data, data);
    }),
  );

  t.test('metadata › given ids and timestamp round-trip unchanged', (t) =>
    withStore(t, async (store) => {
      const stream = uniqueStream('meta');
      const metadata = {
        eventId: 'e0d4a6c2-4a9f-4e43-9f4e-3f2b8a1c9d10',
        correlationId: 'req-42',
        causationId: 'cause-7',
        recordedAt: '2026-01-02T03:04:05.678Z',
      };
      await store.appendToStream(stream, [{ type: 'Tagged', data: {}, metadata }]);
      const [event] = (await store.readStream(stream)).events;
      t.same(event.metadata, metadata);
    }),
  );

  t.test('metadata › a missing event id and timestamp are filled in', (t) =>
    withStore(t, async (store) => {
      const stream = uniqueStream('meta');
      const before = Date.now();
      await store.appendToStream(stream, [
        { type: 'A', data: {}, metadata: { correlationId: 'req-1' } },
        { type: 'B', data: {} },
      ]);
      const after = Date.now();
      const [a, b] = (await store.readStream(stream)).events;
      t.match(a.metadata.eventId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'UUID v4');
      t.not(a.metadata.eventId, b.metadata.eventId, 'every event gets its own id');
      t.equal(a.metadata.correlationId, 'req-1');
      const recordedAt = Date.parse(a.metadata.recordedAt);
      t.equal(new Date(recordedAt).toISOString(), a.metadata.recordedAt, 'recordedAt is an ISO string');
      t.ok(recordedAt >= before - 1000 && recordedAt <= after + 1000, 'recordedAt is now');
    }),
  );

  t.test('concurrency › expected version conflicts are refused and write nothing', async (t) => {
    await withStore(t, async (store) => {
      const stream = uniqueStream('conflict');
      await store.appendToStream(stream, events(2), { expectedVersion: 'no_stream' });

      const noStream = await store.appendToStream(stream, events(1), { expectedVersion: 'no_stream' }).catch((e) => e);
      t.type(noStream, WrongExpectedVersionError, "'no_stream' on an existing stream");
      t.equal(noStream.actual, 1, 'the error reports the actual version');
      t.equal(noStream.code, 'SERP_EVENTSTORE_WRONG_EXPECTED_VERSION');

      const stale = await store.appendToStream(stream, events(1), { expectedVersion: 0 }).catch((e) => e);
      t.type(stale, WrongExpectedVersionError, 'a stale version');
      t.match(stale, { stream, expected: 0, actual: 1 });

      const ahead = await store.appendToStream(stream, events(1), { expectedVersion: 5 }).catch((e) => e);
      t.type(ahead, WrongExpectedVersionError, 'a version from the future');

      const missing = uniqueStream('missing');
      const exists = await store
        .appendToStream(missing, events(1), { expectedVersion: 'stream_exists' })
        .catch((e) => e);
      t.type(exists, WrongExpectedVersionError, "'stream_exists' on a missing stream");
      t.equal(exists.actual, -1);
      t.equal((await store.readStream(missing)).currentVersion, -1, 'the refused append created nothing');
      t.equal((await store.readStream(stream)).events.length, 2, 'no refused event was written');

      t.equal(
        (await store.appendToStream(stream, events(1), { expectedVersion: 'stream_exists' })).nextExpectedVersion,
        2,
      );
      t.equal((await store.appendToStream(stream, events(1), { expectedVersion: 2 })).nextExpectedVersion, 3);
      t.equal((await store.appendToStream(stream, events(1), { expectedVersion: 'any' })).nextExpectedVersion, 4);
      t.equal((await store.appendToStream(stream, events(1))).nextExpectedVersion, 5, "no expectation means 'any'");
    });
  });

  t.test('concurrency › of 100 concurrent appends with the same expected version exactly one wins', (t) =>
    withStore(t, async (store) => {
      const fresh = uniqueStream('race');
      const outcomes = await Promise.allSettled(
        Array.from({ length: 100 }, (_, i) =>
          store.appendToStream(fresh, [{ type: 'Won', data: { i } }], { expectedVersion: 'no_stream' }),
        ),
      );
      const winners = outcomes.filter((o) => o.status === 'fulfilled');
      t.equal(winners.length, 1, "one winner on 'no_stream'");
      t.ok(
        outcomes.every((o) => o.status === 'fulfilled' || o.reason instanceof WrongExpectedVersionError),
        'every loser gets WrongExpectedVersionError',
      );
      t.equal((await store.readStream(fresh)).events.length, 1, 'the stream holds the winner only');

      const second = await Promise.allSettled(
        Array.from({ length: 100 }, () => store.appendToStream(fresh, events(2), { expectedVersion: 0 })),
      );
      t.equal(second.filter((o) => o.status === 'fulfilled').length, 1, 'one winner on a numeric version');
      t.equal((await store.readStream(fresh)).currentVersion, 2);
    }),
  );

  t.test('concurrency › 200 concurrent appends to 200 streams all succeed', (t) =>
    withStore(t, async (store) => {
      const streams = Array.from({ length: 200 }, () => uniqueStream('many'));
      const results = await Promise.all(
        streams.map((s) => store.appendToStream(s, events(1), { expectedVersion: 'no_stream' })),
      );
      t.ok(
        results.every((r) => r.nextExpectedVersion === 0),
        'each is version 0 of its stream',
      );
      t.equal(new Set(results.map((r) => r.lastGlobalPosition)).size, 200, 'each has its own global position');
      for (const s of [streams[0], streams[199]]) t.equal((await store.readStream(s)).events.length, 1);
    }),
  );

  t.test('global order › readAll is the append order with an exclusive start', (t) =>
    withStore(t, async (store) => {
      const start = await store.headPosition();
      const a = uniqueStream('a');
      const b = uniqueStream('b');
      await store.appendToStream(a, events(2));
      await store.appendToStream(b, events(1));
      await store.appendToStream(a, events(1, 'Again'));
      const mine = (await store.readAll({ fromPosition: start })).filter(
        (e) => e.streamName === a || e.streamName === b,
      );
      t.same(
        mine.map((e) => [e.streamName, e.streamVersion]),
        [
          [a, 0],
          [a, 1],
          [b, 0],
          [a, 2],
        ],
      );
      const positions = mine.map((e) => e.globalPosition);
      t.ok(
        positions.every((p, i) => i === 0 || p > positions[i - 1]),
        'positions strictly increase',
      );
      t.ok(positions[0] > start, 'fromPosition is exclusive');
      t.equal(await store.headPosition(), positions[3], 'headPosition is the newest event');
      const after = await store.readAll({ fromPosition: positions[1], maxCount: 1 });
      t.equal(after[0].globalPosition, positions[2], 'reading after a position starts at the next event');
      t.equal(after.length, 1, 'maxCount limits the batch');
    }),
  );

  t.test('restart › data and positions survive close and reopen', (t) =>
    withStore(t, async (store, fixture) => {
      const stream = uniqueStream('restart');
      await store.appendToStream(stream, events(3));
      const before = await store.readStream(stream);
      const head = await store.headPosition();
      await store.close();
      const reopened = await fixture.connect();
      t.teardown(() => reopened.close());
      t.same(await reopened.readStream(stream), before, 'same events, versions, positions and metadata');
      t.equal(await reopened.headPosition(), head);
      const next = await reopened.appendToStream(stream, events(1), { expectedVersion: 2 });
      t.equal(next.nextExpectedVersion, 3, 'versions continue where they stopped');
      t.ok(next.lastGlobalPosition > head, 'global positions continue too');
    }),
  );

  t.test('close › waits for appends still pending', (t) =>
    withStore(t, async (store, fixture) => {
      const stream = uniqueStream('closing');
      const pending = store.appendToStream(stream, events(5));
      await store.close();
      t.equal((await pending).nextExpectedVersion, 4, 'the pending append was acknowledged');
      const reopened = await fixture.connect();
      t.teardown(() => reopened.close());
      t.equal((await reopened.readStream(stream)).events.length, 5, 'and it is in the store');
      await t.rejects(store.appendToStream(stream, events(1)), 'a closed store refuses appends');
    }),
  );

  eventStoreSubscriptionConformance(t, withStore);
};
