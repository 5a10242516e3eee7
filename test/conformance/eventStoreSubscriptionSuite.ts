import type { Test } from 'tap';
import type { EventStore, RecordedEvent } from '../../services/ports/eventStore.js';
import { createCollector, type EventStoreFixture, events, sleep, uniqueStream } from './eventStoreHelpers.js';

type WithStore = (t: Test, body: (store: EventStore, fixture: EventStoreFixture) => Promise<void>) => Promise<void>;

const ofStream = (stream: string) => (e: RecordedEvent) => e.streamName === stream;

/** subscribeToAll, part of eventStoreConformance: catch-up from a checkpoint, then live, across instances and restarts */
export const eventStoreSubscriptionConformance = (t: Test, withStore: WithStore) => {
  t.test('subscribeToAll › from a checkpoint gets only later events, then live ones', (t) =>
    withStore(t, async (store) => {
      const stream = uniqueStream('sub');
      await store.appendToStream(stream, events(3));
      const [, second] = (await store.readStream(stream)).events;
      const seen = createCollector(ofStream(stream));
      const subscription = store.subscribeToAll(second.globalPosition, seen.handler);
      t.teardown(() => subscription.stop());

      await seen.until((r) => r.length >= 1, 'the catch-up event');
      await store.appendToStream(stream, events(2, 'Live'));
      await seen.until((r) => r.length >= 3, 'the live events');
      t.same(
        seen.received.map((e) => [e.streamVersion, e.type]),
        [
          [2, 'Happened'],
          [3, 'Live'],
          [4, 'Live'],
        ],
        'nothing at or before the checkpoint, nothing twice, in order',
      );
      const all = seen.batches.flat().map((e) => e.globalPosition);
      t.ok(
        all.every((p, i) => i === 0 || p === all[i - 1] + 1 || p > all[i - 1]),
        'batches arrive in global order',
      );
    }),
  );

  t.test('subscribeToAll › handler calls never overlap', (t) =>
    withStore(t, async (store) => {
      const stream = uniqueStream('serial');
      let running = 0;
      let maxRunning = 0;
      const seen = createCollector(ofStream(stream));
      const subscription = store.subscribeToAll(await store.headPosition(), async (batch) => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await sleep(10);
        seen.handler(batch);
        running -= 1;
      });
      t.teardown(() => subscription.stop());
      await Promise.all(Array.from({ length: 10 }, () => store.appendToStream(stream, events(1))));
      for (let i = 0; i < 10; i += 1) await store.appendToStream(stream, events(1));
      await seen.until((r) => r.length >= 20, 'all twenty events');
      t.equal(seen.received.length, 20, 'every event handled once');
      t.equal(maxRunning, 1, 'one handler call at a time');
    }),
  );

  t.test('subscribeToAll › stop waits for the handler in flight, then delivers nothing more', (t) =>
    withStore(t, async (store) => {
      const stream = uniqueStream('stop');
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let entered = () => {};
      const inHandler = new Promise<void>((resolve) => {
        entered = resolve;
      });
      let finished = 0;
      let calls = 0;
      const subscription = store.subscribeToAll(await store.headPosition(), async (batch) => {
        if (!batch.some(ofStream(stream))) return;
        calls += 1;
        entered();
        await gate;
        finished += 1;
      });
      await store.appendToStream(stream, events(1));
      await inHandler;
      let stopped = false;
      const stopping = subscription.stop().then(() => {
        stopped = true;
      });
      await sleep(100);
      t.notOk(stopped, 'stop has not resolved while the handler runs');
      release();
      await stopping;
      t.equal(finished, 1, 'the handler in flight completed before stop resolved');
      await store.appendToStream(stream, events(1));
      await sleep(400);
      t.equal(calls, 1, 'no delivery after stop');
    }),
  );

  t.test('subscribeToAll › a batch whose handler threw is delivered again', (t) =>
    withStore(t, async (store) => {
      const stream = uniqueStream('retry');
      await store.appendToStream(stream, events(2));
      let failures = 0;
      const seen = createCollector(ofStream(stream));
      const subscription = store.subscribeToAll(0, (batch) => {
        if (batch.some(ofStream(stream)) && failures === 0) {
          failures += 1;
          throw new Error('projection failed once');
        }
        seen.handler(batch);
      });
      t.teardown(() => subscription.stop());
      await seen.until((r) => r.length >= 2, 'the retried batch');
      t.equal(failures, 1);
      t.same(
        seen.received.map((e) => e.streamVersion),
        [0, 1],
        'the failed events come back, in order, once handled',
      );
    }),
  );

  t.test('subscribeToAll › resumes from a saved checkpoint after a restart', (t) =>
    withStore(t, async (store, fixture) => {
      const stream = uniqueStream('resume');
      const seen = createCollector(ofStream(stream));
      let checkpoint = await store.headPosition();
      const first = store.subscribeToAll(checkpoint, (batch) => {
        seen.handler(batch);
        checkpoint = batch[batch.length - 1].globalPosition;
      });
      await store.appendToStream(stream, events(3));
      await seen.until((r) => r.length >= 3, 'the first three events');
      await first.stop();
      await store.appendToStream(stream, events(2, 'WhileDown'));
      await store.close();

      const reopened = await fixture.connect();
      const again = createCollector(ofStream(stream));
      const second = reopened.subscribeToAll(checkpoint, again.handler);
      t.teardown(async () => {
        await second.stop();
        await reopened.close();
      });
      await again.until((r) => r.length >= 2, 'the events appended while down');
      await reopened.appendToStream(stream, events(1, 'AfterRestart'));
      await again.until((r) => r.length >= 3, 'a live event after the restart');
      t.same(
        again.received.map((e) => [e.streamVersion, e.type]),
        [
          [3, 'WhileDown'],
          [4, 'WhileDown'],
          [5, 'AfterRestart'],
        ],
        'continues exactly after the checkpoint',
      );
    }),
  );

  t.test('subscribeToAll › sees events appended by another instance on the same data', (t) =>
    withStore(t, async (store, fixture) => {
      const other = await fixture.connect();
      t.teardown(() => other.close());
      const stream = uniqueStream('cross');
      const seen = createCollector(ofStream(stream));
      const subscription = store.subscribeToAll(await store.headPosition(), seen.handler);
      t.teardown(() => subscription.stop());
      await other.appendToStream(stream, [{ type: 'FromElsewhere', data: { ok: true } }]);
      await seen.until((r) => r.length >= 1, 'the other instance’s event');
      t.same(seen.received[0].data, { ok: true });
    }),
  );
};
