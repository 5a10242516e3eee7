import t from 'tap';
import { replayOfDelivery, streams } from '../../../contracts/events.js';
import { deciderSpec } from '../../../domain/kernel/givenWhenThen.js';
import {
  type DeliveryCommand,
  type DeliveryEvent,
  deliveryDecider,
  HOUR_MS,
  type ReplayData,
  retryDelayMs,
  type ScheduledData,
} from '../../../domain/webhook/delivery.js';
import { replayedDeliveryIdOf } from '../../../domain/webhook/ids.js';

const spec = deciderSpec(deliveryDecider);
const t0 = Date.parse('2026-03-01T12:00:00.000Z');
const iso = (ms: number) => new Date(t0 + ms).toISOString();
const DAY = 24 * HOUR_MS;

const delivery: ScheduledData = {
  deliveryId: 'dlv_1',
  webhookId: 'wh_1',
  keyId: 'k1',
  messageId: 'msg_1',
  eventType: 'search.completed',
  body: '{"type":"search.completed","timestamp":"2026-03-01T11:59:59.000Z","data":{}}',
  occurredAt: '2026-03-01T11:59:59.000Z',
  scheduledAt: iso(0),
};
const scheduled: DeliveryEvent = { type: 'WebhookDeliveryScheduled', data: delivery };
const base = { deliveryId: 'dlv_1', webhookId: 'wh_1', eventType: 'search.completed' as const };

const claim = (atMs: number, worker = 'w1', over: Partial<Extract<DeliveryCommand, { type: 'ClaimAttempt' }>> = {}) =>
  ({ type: 'ClaimAttempt', deliveryId: 'dlv_1', worker, now: iso(atMs), leaseMs: 15_000, ...over }) as DeliveryCommand;
const claimed = (attempt: number, atMs: number, worker = 'w1'): DeliveryEvent => ({
  type: 'WebhookAttemptClaimed',
  data: { deliveryId: 'dlv_1', attempt, worker, claimedAt: iso(atMs), leaseUntil: iso(atMs + 15_000) },
});
const record = (attempt: number, atMs: number, statusCode?: number, retryMs = 5_000): DeliveryCommand => ({
  type: 'RecordAttempt',
  deliveryId: 'dlv_1',
  attempt,
  outcome: { ...(statusCode !== undefined ? { statusCode } : { error: 'timed out' }), latencyMs: 40 },
  retryDelayMs: retryMs,
  giveUpAfterMs: DAY,
  now: iso(atMs),
});

t.test('Delivery › scheduled', async (t) => {
  t.same(spec.given([]).when({ type: 'ScheduleDelivery', delivery }), [scheduled]);
  t.same(spec.given([scheduled]).when({ type: 'ScheduleDelivery', delivery }), [], 'its id is derived: scheduled once');
  t.throws(() => spec.given([]).when(claim(0)), { code: 'SERP_WEBHOOK_DELIVERY_NOT_FOUND' });
});

t.test('Delivery › each attempt is claimed before it is sent', async (t) => {
  t.test('one claim wins: a second worker within the lease claims nothing', async (t) => {
    t.same(spec.given([scheduled]).when(claim(0)), [claimed(1, 0)]);
    t.same(spec.given([scheduled, claimed(1, 0)]).when(claim(1_000, 'w2')), []);
  });
  t.test('a lapsed lease (its worker died) is taken again, as the next attempt', async (t) => {
    t.same(spec.given([scheduled, claimed(1, 0)]).when(claim(15_000, 'w2')), [claimed(2, 15_000, 'w2')]);
  });
  t.test("a previous life's claim is dead at once where one process owns the data", async (t) => {
    const restarted = claim(1_000, 'w2', { staleBefore: t0 + 500 });
    t.same(spec.given([scheduled, claimed(1, 0)]).when(restarted), [claimed(2, 1_000, 'w2')]);
    t.same(
      spec.given([scheduled, claimed(1, 0)]).when(claim(1_000, 'w1', { staleBefore: t0 + 500 })),
      [],
      'its own claims are not',
    );
  });
  t.test('nothing is claimed before its next attempt is due', async (t) => {
    const failed = spec.given([scheduled, claimed(1, 0)]).when(record(1, 100, 503));
    t.same(spec.given([scheduled, claimed(1, 0), ...failed]).when(claim(4_000)), []);
    t.equal(spec.given([scheduled, claimed(1, 0), ...failed]).when(claim(5_100)).length, 1);
  });
});

t.test('Delivery › what an attempt comes to', async (t) => {
  const given = [scheduled, claimed(1, 0)];
  t.test('a 2xx is delivered', async (t) => {
    t.same(spec.given(given).when(record(1, 100, 204)), [
      {
        type: 'WebhookDelivered',
        data: { ...base, attempt: 1, statusCode: 204, latencyMs: 40, deliveredAt: iso(100) },
      },
    ]);
  });
  t.test('anything else is retried after its delay; a 410 gives up', async (t) => {
    t.same(spec.given(given).when(record(1, 100, 302)), [
      {
        type: 'WebhookDeliveryAttempted',
        data: { ...base, attempt: 1, statusCode: 302, latencyMs: 40, attemptedAt: iso(100), nextAttemptAt: iso(5_100) },
      },
    ]);
    t.same(spec.given(given).when(record(1, 100)), [
      {
        type: 'WebhookDeliveryAttempted',
        data: {
          ...base,
          attempt: 1,
          error: 'timed out',
          latencyMs: 40,
          attemptedAt: iso(100),
          nextAttemptAt: iso(5_100),
        },
      },
    ]);
    t.same(
      spec
        .given(given)
        .when(record(1, 100, 410))
        .map((e) => e.type === 'WebhookDeliveryGivenUp' && e.data.reason),
      ['endpoint_gone'],
    );
  });
  t.test('past 24 h after it was scheduled, the next retry is not made', async (t) => {
    const late = spec.given([scheduled, claimed(7, DAY - 60_000)]).when(record(7, DAY - 50_000, 503, 3_600_000));
    t.match(late, [{ type: 'WebhookDeliveryGivenUp', data: { reason: 'retries_exhausted', attempt: 7 } }]);
  });
  t.test("an attempt that is not the claim's, or of an ended delivery, records nothing", async (t) => {
    t.same(spec.given(given).when(record(2, 100, 204)), []);
    const delivered = spec.given(given).when(record(1, 100, 204));
    t.same(spec.given([...given, ...delivered]).when(record(1, 200, 204)), []);
    t.same(spec.given([...given, ...delivered]).when(claim(300)), []);
  });
});

t.test('Delivery › given up and retried', async (t) => {
  const giveUp: DeliveryCommand = { type: 'GiveUp', deliveryId: 'dlv_1', reason: 'endpoint_deleted', now: iso(50) };
  const gaveUp = spec.given([scheduled, claimed(1, 0)]).when(giveUp);
  t.same(gaveUp, [
    {
      type: 'WebhookDeliveryGivenUp',
      data: { ...base, attempt: 1, reason: 'endpoint_deleted', givenUpAt: iso(50) },
    },
  ]);
  t.same(spec.given([scheduled, claimed(1, 0), ...gaveUp]).when(giveUp), [], 'once');
  t.test('a retry brings it back with its key, webhook-id and body, and a new 24 h window', async (t) => {
    const retry: DeliveryCommand = { type: 'RequestRetry', deliveryId: 'dlv_1', now: iso(DAY * 2) };
    const retried = spec.given([scheduled, claimed(1, 0), ...gaveUp]).when(retry);
    t.same(retried, [
      {
        type: 'WebhookDeliveryRetryRequested',
        data: {
          ...base,
          requestedAt: iso(DAY * 2),
          keyId: 'k1',
          messageId: 'msg_1',
          body: delivery.body,
        },
      },
    ]);
    const again = [scheduled, claimed(1, 0), ...gaveUp, ...retried];
    t.same(spec.given(again).when(claim(DAY * 2)), [claimed(2, DAY * 2)]);
    const failed = spec.given([...again, claimed(2, DAY * 2)]).when(record(2, DAY * 2 + 100, 503));
    t.equal(failed[0]?.type, 'WebhookDeliveryAttempted', 'within its new window: retried, not given up');
  });
});

t.test('Delivery › the delay between attempts', async (t) => {
  t.equal(retryDelayMs(1, 5_000, 0.5), 5_000, 'the first: the base (jitter 1.0)');
  t.equal(retryDelayMs(3, 5_000, 0.5), 20_000, 'doubling per attempt');
  t.equal(retryDelayMs(1, 5_000, 0), 4_000, 'jitter down to 0.8');
  t.ok(retryDelayMs(1, 5_000, 0.999) < 6_000, 'and under 1.2');
  t.equal(retryDelayMs(30, 5_000, 0.999), HOUR_MS, 'never over an hour');
});

t.test('Delivery › a replay recorded by reference (docs/webhooks.md#replay-recorded-by-reference)', async (t) => {
  const replayId = 'rpl_0195a3c4b5d6e1f2a3b4c5d6';
  const replay: ReplayData = {
    replayId,
    webhookId: 'wh_1',
    keyId: 'k1',
    since: iso(-HOUR_MS),
    requestedAt: iso(0),
    scheduledAt: iso(10),
    fromPosition: 4,
    toPosition: 40,
    baseUrl: '',
    selected: 2,
    capped: false,
    skipped: 0,
    messages: [
      [7, 'msg_a', 'search.completed'],
      [9, 'msg_b', 'search.failed'],
    ],
  };
  const recorded: DeliveryEvent = { type: 'WebhookReplayScheduled', data: replay };
  const first = replayedDeliveryIdOf(replayId, 0);
  const second = replayedDeliveryIdOf(replayId, 1);
  const claimOf = (deliveryId: string, atMs: number, worker = 'w1') =>
    ({ type: 'ClaimAttempt', deliveryId, worker, now: iso(atMs), leaseMs: 15_000 }) as DeliveryCommand;

  t.test('recorded once, whoever records it first', async (t) => {
    t.same(spec.given([]).when({ type: 'ScheduleReplay', replay }), [recorded]);
    t.same(spec.given([recorded]).when({ type: 'ScheduleReplay', replay }), [], 'a second router records nothing');
  });
  t.test("each entry's delivery is named by an id that leads to the replay's stream", async (t) => {
    t.equal(streams.webhookDelivery(first), streams.webhookReplay(replayId));
    t.same(replayOfDelivery(second), { replayId, index: 1 });
    t.equal(streams.webhookDelivery('dlv_0195a3c4b5d6e1f2a3b4c5d6'), 'webhookDelivery-dlv_0195a3c4b5d6e1f2a3b4c5d6');
    t.ok(first < second && first.startsWith('dlv_0195a3c4b5d6'), 'time-ordered by the replay, then by entry');
  });
  t.test('the first claim says what the delivery is; later ones do not', async (t) => {
    const c1 = spec.given([recorded]).when(claimOf(first, 20));
    t.same(c1, [
      {
        type: 'WebhookAttemptClaimed',
        data: {
          deliveryId: first,
          attempt: 1,
          worker: 'w1',
          claimedAt: iso(20),
          leaseUntil: iso(15_020),
          opened: {
            webhookId: 'wh_1',
            keyId: 'k1',
            messageId: 'msg_a',
            eventType: 'search.completed',
            scheduledAt: iso(10),
          },
        },
      },
    ]);
    t.same(spec.given([recorded, ...c1]).when(claimOf(first, 1_000, 'w2')), [], 'one claim wins');
    const lapsed = spec.given([recorded, ...c1]).when(claimOf(first, 16_000, 'w2'));
    t.equal(lapsed.length, 1);
    t.notOk(lapsed[0] && 'opened' in lapsed[0].data, 'a lapsed claim taken again is attempt 2, plain');
  });
  t.test("one delivery's events leave the replay's others as they were", async (t) => {
    const c1 = spec.given([recorded]).when(claimOf(first, 20));
    const done = spec.given([recorded, ...c1]).when({ ...record(1, 100, 204), deliveryId: first } as DeliveryCommand);
    t.equal(done[0]?.type, 'WebhookDelivered');
    t.same(done[0]?.data, {
      deliveryId: first,
      webhookId: 'wh_1',
      eventType: 'search.completed',
      attempt: 1,
      statusCode: 204,
      latencyMs: 40,
      deliveredAt: iso(100),
    });
    const after = [recorded, ...c1, ...done];
    t.same(spec.given(after).when(claimOf(first, 200)), [], 'the delivered one is done');
    const other = spec.given(after).when(claimOf(second, 200));
    t.match(other[0]?.data, { attempt: 1, opened: { messageId: 'msg_b' } });
    t.test('a retry of a replayed delivery carries its key and webhook-id, and no body', async (t) => {
      const retried = spec.given(after).when({ type: 'RequestRetry', deliveryId: first, now: iso(300) });
      t.same(retried[0]?.data, {
        deliveryId: first,
        webhookId: 'wh_1',
        eventType: 'search.completed',
        requestedAt: iso(300),
        keyId: 'k1',
        messageId: 'msg_a',
      });
    });
  });
  t.test('an id past the entries, or of another replay, is not found', async (t) => {
    t.throws(() => spec.given([recorded]).when(claimOf(replayedDeliveryIdOf(replayId, 2), 20)), {
      code: 'SERP_WEBHOOK_DELIVERY_NOT_FOUND',
    });
    t.throws(() => spec.given([recorded]).when(claimOf(replayedDeliveryIdOf('rpl_0195a3c4b5d6ffffffffffff', 0), 20)), {
      code: 'SERP_WEBHOOK_DELIVERY_NOT_FOUND',
    });
  });
});
