import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { type DomainEvent, streams } from '../../contracts/events.js';
import { fold } from '../../domain/kernel/decider.js';
import { type DeliveryCommand, type DeliveryEvent, deliveryDecider } from '../../domain/webhook/delivery.js';
import { replayedDeliveryIdOf } from '../../domain/webhook/ids.js';
import { allProjections, readModelQueries } from '../../projections/index.js';
import type { ProjectedEvent } from '../../projections/projection.js';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';

/**
 * A replay recorded by reference, as users read it (docs/webhooks.md#replay-recorded-by-reference): its deliveries are
 * listed, paged and found in the outbox from the replay's one event until each is claimed, then from their own
 * documents, and the lists read the same either way; the views rebuild byte for byte from the log; deliveries a
 * previous version scheduled one event each (with their body) still project as before.
 */
const T = Date.parse('2026-03-01T12:00:00.000Z');
const iso = (ms: number) => new Date(T + ms).toISOString();
const replayId = 'rpl_0195a3c4b5d6e1f2a3b4c5d6';
const ids = [0, 1, 2].map((i) => replayedDeliveryIdOf(replayId, i));

const openStore = (t: Test) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-replay-views-'));
  const store = createSqliteReadModelStore(join(dir, 'read.db'));
  t.teardown(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
};

/** the log, each event at its position, and a store the projections fold it into as the projector does */
const logOf = () => {
  const log: ProjectedEvent[] = [];
  const add = (streamName: string, e: DomainEvent) => {
    log.push({ ...e, streamName, globalPosition: log.length + 1, recordedAt: iso(log.length) } as ProjectedEvent);
  };
  const project = (store: ReturnType<typeof createSqliteReadModelStore>, events: ProjectedEvent[]) => {
    for (const e of events) {
      for (const p of allProjections) {
        const id = p.idOf(e);
        if (id === undefined) continue;
        const next = p.evolve(store.get(p.name, id), e);
        store.commit(
          [{ view: p.name, id, doc: next, lookup: next === null ? undefined : p.lookupOf?.(next) }],
          'test',
          e.globalPosition,
        );
      }
    }
  };
  /** decides a command on a delivery's stream as the command handler does, and records what it decided */
  const decide = (deliveryId: string, c: DeliveryCommand) => {
    const stream = streams.webhookDelivery(deliveryId);
    const mine = log.filter((e) => e.streamName === stream) as unknown as DeliveryEvent[];
    const decided = deliveryDecider.decide(c, fold(deliveryDecider, mine));
    for (const e of decided) add(stream, e);
    return decided;
  };
  return { log, add, project, decide };
};

t.test('a replay by reference › listed from its event, then from its deliveries, the same', async (t) => {
  const store = openStore(t);
  const q = readModelQueries(store).webhooks;
  const { log, add, project, decide } = logOf();
  add(streams.webhook('wh_1'), {
    type: 'WebhookCreated',
    data: {
      webhookId: 'wh_1',
      keyId: 'key_1',
      url: 'https://hooks.example.com/x',
      events: ['search.completed', 'search.failed'],
      secretSeed: 's',
      createdAt: iso(0),
    },
  });
  // a replayed delivery as the previous version scheduled it: one event, with its body
  const old = 'dlv_0195a3c4b5000000000000aa';
  add(streams.webhookDelivery(old), {
    type: 'WebhookDeliveryScheduled',
    data: {
      deliveryId: old,
      webhookId: 'wh_1',
      keyId: 'key_1',
      messageId: 'msg_old',
      eventType: 'search.completed',
      body: '{"type":"search.completed","timestamp":"2026-03-01T11:00:00.000Z","data":{}}',
      occurredAt: iso(-3_600_000),
      replayId: 'rpl_0195a3c4b5000000000000aa',
      scheduledAt: iso(1),
    },
  });
  decide(ids[0]!, {
    type: 'ScheduleReplay',
    replay: {
      replayId,
      webhookId: 'wh_1',
      keyId: 'key_1',
      since: iso(-7_200_000),
      requestedAt: iso(2),
      scheduledAt: iso(3),
      fromPosition: 0,
      toPosition: 2,
      baseUrl: '',
      selected: 3,
      capped: false,
      skipped: 0,
      messages: [
        [1, 'msg_a', 'search.completed'],
        [1, 'msg_b', 'search.failed'],
        [2, 'msg_c', 'search.completed'],
      ],
    },
  });
  project(store, log);

  t.test('the previous version’s replayed delivery still lists and sends its body', async (t) => {
    t.match(q.delivery(old), { messageId: 'msg_old', replayId: 'rpl_0195a3c4b5000000000000aa', status: 'pending' });
    t.match(q.outboxBody(old), { messageId: 'msg_old' });
  });

  const page = (f: { status?: string; since?: string; last: number }) => q.deliveriesPage('wh_1', f);
  const listed = page({ last: 100 });
  t.same(
    listed.map((d) => [d.deliveryId, d.messageId, d.status, d.replayId ?? null]),
    [
      [old, 'msg_old', 'pending', 'rpl_0195a3c4b5000000000000aa'],
      [ids[0], 'msg_a', 'pending', replayId],
      [ids[1], 'msg_b', 'pending', replayId],
      [ids[2], 'msg_c', 'pending', replayId],
    ],
    'each entry of the replay is a pending delivery, in id order, before any claim',
  );
  t.same(
    page({ last: 2 }).map((d) => d.deliveryId),
    ids.slice(1),
    'a page of the newest two',
  );
  t.same(page({ status: 'delivered', last: 100 }), [], 'a status filter leaves them out');
  t.same(
    page({ since: iso(2), last: 100 }).map((d) => d.deliveryId),
    ids,
    'scheduled when the replay was',
  );
  t.same(page({ since: iso(4), last: 100 }), [], 'and not after');
  t.same(
    q
      .outbox()
      .filter((d) => d.deliveryId !== old)
      .map((d) => [d.deliveryId, d.keyId, d.eventType, d.due]),
    [
      [ids[0], 'key_1', 'search.completed', T + 3],
      [ids[1], 'key_1', 'search.failed', T + 3],
      [ids[2], 'key_1', 'search.completed', T + 3],
    ],
    'the outbox holds them, due at once, for the key',
  );
  t.match(q.delivery(ids[1]!), { messageId: 'msg_b', status: 'pending', replayId }, 'the retry route finds one');

  const claim = (i: number, atMs: number, worker = 'w1') =>
    decide(ids[i]!, { type: 'ClaimAttempt', deliveryId: ids[i]!, worker, now: iso(atMs), leaseMs: 15_000 });
  const before = log.length;
  claim(0, 10);
  claim(1, 10);
  project(store, log.slice(before));
  t.same(page({ last: 100 }), listed, 'claimed, they read the same from their own documents');
  t.match(
    q.outbox().find((d) => d.deliveryId === ids[0]),
    { keyId: 'key_1', leaseUntil: T + 15_010, worker: 'w1' },
    'a claimed one is leased in the outbox',
  );
  t.equal(q.outbox().filter((d) => ids.includes(d.deliveryId)).length, 3, 'each once in the outbox');

  const next = log.length;
  decide(ids[0]!, {
    type: 'RecordAttempt',
    deliveryId: ids[0]!,
    attempt: 1,
    outcome: { statusCode: 204, latencyMs: 12 },
    retryDelayMs: 5_000,
    giveUpAfterMs: 86_400_000,
    now: iso(20),
  });
  claim(2, 20);
  project(store, log.slice(next));
  t.same(
    page({ last: 100 }).map((d) => [d.deliveryId, d.status, d.attempts]),
    [
      [old, 'pending', []],
      [ids[0], 'delivered', [[1, iso(20), 204, 12, '']]],
      [ids[1], 'pending', []],
      [ids[2], 'pending', []],
    ],
    'an outcome lists as any delivery’s',
  );
  t.notOk(store.has('webhookOpenReplays', replayId), 'every delivery claimed: the replay no longer stands for any');
  t.notOk(
    q.outbox().some((d) => d.deliveryId === ids[0]),
    'a delivered one leaves the outbox',
  );

  t.test('the log rebuilds the same views, byte for byte', async (t) => {
    const rebuilt = openStore(t);
    project(rebuilt, log);
    t.same(rebuilt.dump(), store.dump());
  });
});
