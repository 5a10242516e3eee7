import t from 'tap';
import {
  createAppendSignal,
  startCatchUpSubscription,
} from '../../services/adapters/eventStore/catchUpSubscription.js';
import type { RecordedEvent } from '../../services/ports/eventStore.js';

/**
 * The catch-up subscription the JetStream and KurrentDB event stores share: with `batchSize`, a batch shorter than it
 * reached the end of the log, so the subscription waits for the next append instead of asking again at once, where
 * every ask is a round trip (docs/distributed.md#the-event-log-on-jetstream); a full batch is followed by the next.
 */
const event = (globalPosition: number) => ({ globalPosition }) as RecordedEvent;

const logOf = (length: number) => {
  const log = Array.from({ length }, (_, i) => event(i + 1));
  const reads: number[] = [];
  return {
    log,
    reads,
    readAfter: async (position: number, max: number) => {
      reads.push(position);
      return log.filter((e) => e.globalPosition > position).slice(0, max);
    },
  };
};
const settle = () => new Promise((r) => setTimeout(r, 50));

t.test('catch-up subscription › a short batch is the end of the log: no read again until an append', async (t) => {
  const { log, reads, readAfter } = logOf(5);
  const signal = createAppendSignal();
  const seen: number[] = [];
  const sub = startCatchUpSubscription({
    fromPosition: 0,
    handler: (batch) => void seen.push(...batch.map((e) => e.globalPosition)),
    readAfter: (p) => readAfter(p, 2),
    onAppended: signal.onAppended,
    pollIntervalMs: 60_000,
    onError: (err) => t.fail(String(err)),
    batchSize: 2,
  });
  t.teardown(() => sub.stop());
  await settle();
  t.same(seen, [1, 2, 3, 4, 5], 'every event, in order');
  t.same(reads, [0, 2, 4], 'two full batches each followed by the next read, and none after the short one');
  log.push(event(6));
  signal.notify();
  await settle();
  t.same(seen, [1, 2, 3, 4, 5, 6], 'an append wakes it');
  t.same(reads, [0, 2, 4, 5], 'with one read, which came back short');
});

t.test('catch-up subscription › without a batch size, it reads again until a read finds nothing', async (t) => {
  const { reads, readAfter } = logOf(5);
  const signal = createAppendSignal();
  const sub = startCatchUpSubscription({
    fromPosition: 0,
    handler: () => undefined,
    readAfter: (p) => readAfter(p, 2),
    onAppended: signal.onAppended,
    pollIntervalMs: 60_000,
    onError: (err) => t.fail(String(err)),
  });
  t.teardown(() => sub.stop());
  await settle();
  t.same(
    reads,
    [0, 2, 4, 5],
    'the read after the short batch found nothing (what SQLite, whose reads cost no round trip, keeps)',
  );
});

t.test('catch-up subscription › an append during the handler of a short batch is not lost', async (t) => {
  const { log, readAfter } = logOf(1);
  const signal = createAppendSignal();
  const seen: number[] = [];
  const sub = startCatchUpSubscription({
    fromPosition: 0,
    handler: (batch) => {
      seen.push(...batch.map((e) => e.globalPosition));
      if (log.length === 1) {
        log.push(event(2));
        signal.notify();
      }
    },
    readAfter: (p) => readAfter(p, 10),
    onAppended: signal.onAppended,
    pollIntervalMs: 60_000,
    onError: (err) => t.fail(String(err)),
    batchSize: 10,
  });
  t.teardown(() => sub.stop());
  await settle();
  t.same(seen, [1, 2], 'the event appended while the handler ran is read at once, not at the next poll');
});
