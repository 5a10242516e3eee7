import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { streams } from '../../../contracts/events.js';
import { createSqliteEventStore } from '../../../services/adapters/eventStore/sqlite.js';
import type { EventStore } from '../../../services/ports/eventStore.js';
import { logEventOf } from '../../../services/reactor/reactor.js';
import { createQuotaTracker, firstOfNextMonth, type UsageEvent } from '../../../services/webhooks/workers/quota.js';

/**
 * The count behind the quota webhooks (docs/webhooks.md): a key's searches of the month as its usage stream's events
 * go by, so that `quota.low` and `quota.exhausted` fire when a reservation crosses 80 % and 100 %.
 */
const stream = streams.usage('key_a', '202612');
const reserve = (jobId: string) => ({
  type: 'QuotaReserved',
  data: { keyId: 'key_a', month: '202612', jobId, reservedAt: '2026-12-07T10:00:00.000Z' },
});
const release = (jobId: string) => ({
  type: 'QuotaReleased',
  data: { keyId: 'key_a', month: '202612', jobId, reason: 'failed', releasedAt: '2026-12-07T10:01:00.000Z' },
});

/** the stream's events as the reactors get them */
const usageEvents = async (store: EventStore) =>
  (await store.readStream(stream)).events.map((raw) => logEventOf(raw) as UsageEvent);

t.test('webhook quota tracker', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-quota-'));
  const store = createSqliteEventStore({ path: join(dir, 'events.db') });
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await store.appendToStream(stream, [reserve('j1'), reserve('j2'), release('j2'), reserve('j3'), reserve('j4')]);
  const events = await usageEvents(store);
  t.same(
    events.map((e) => e?.type),
    ['QuotaReserved', 'QuotaReserved', 'QuotaReleased', 'QuotaReserved', 'QuotaReserved'],
    'the usage stream reads back as the reactors see it',
  );

  await t.test('followed from the start, each event moves the count by one', async (t) => {
    const tracker = createQuotaTracker(store);
    const seen = [];
    for (const e of events) seen.push(await tracker.crossing(e, true));
    t.same(
      seen,
      [
        { before: 0, after: 1 },
        { before: 1, after: 2 },
        { before: 2, after: 1 },
        { before: 1, after: 2 },
        { before: 2, after: 3 },
      ],
      'reserved counts up, released down',
    );
    t.same(
      await tracker.crossing(events[4], true),
      { before: 2, after: 3 },
      'asked again for the same event: the same',
    );
  });

  await t.test('first seen mid-way, the stream is read up to there', async (t) => {
    const tracker = createQuotaTracker(store);
    t.same(await tracker.crossing(events[3], true), { before: 1, after: 2 }, 'the count before it comes from the log');
    t.equal(await tracker.crossing(events[3], false), undefined, 'a key no endpoint follows is not counted');
    t.same(await tracker.crossing(events[4], true), { before: 2, after: 3 }, 'and it goes on from there');
    t.equal(
      await tracker.crossing({ ...events[2], eventId: 'replayed' }, true),
      undefined,
      'an event already counted moves nothing',
    );
  });
});

t.test('webhook quota tracker › when the quota renews', async (t) => {
  t.equal(firstOfNextMonth('202612'), '2027-01-01T00:00:00.000Z', 'December renews on the first of January');
  t.equal(firstOfNextMonth('202602'), '2026-03-01T00:00:00.000Z', 'February on the first of March');
});
