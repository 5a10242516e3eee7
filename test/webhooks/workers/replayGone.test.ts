import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { streams } from '../../../contracts/events.js';
import { deliveryDecider } from '../../../domain/webhook/delivery.js';
import { replayedDeliveryIdOf, replayIdOf } from '../../../domain/webhook/ids.js';
import { createDeliverer } from '../../../services/webhooks/workers/deliverer.js';
import { openWebhookCore } from '../../support/webhookCore.js';

/**
 * A replayed delivery's body is made again at its attempt from the log event its entry names
 * (docs/webhooks.md#replay-recorded-by-reference). When that event makes no message any more (its job purged since),
 * the delivery ends `failed` with `message_gone` after one claim: nothing is sent, and it is not claimed again.
 */
t.test('a replayed message that cannot be made again ends, sent to no one', async (t) => {
  let arrivals = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrivals++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  t.teardown(() => receiver.close());
  const {
    core,
    sender,
    service,
    projected,
    mintKey,
    deliverer: hand,
  } = await openWebhookCore(t, {
    name: 'serp-replay-gone',
    timeoutMs: 2_000,
    maxSockets: 8,
  });
  const key = await mintKey('gone');
  const keyId = key.keyId;
  const hook = (await service.create(key, { url: `${origin}/r`, events: ['search.completed'] })).webhook_id;
  const head = await core.eventStore.headPosition();
  // the entry names an event that makes no message: the endpoint's own creation, as a purged job's answer would be
  const replayId = replayIdOf(Date.now(), randomBytes(6).toString('hex'));
  const at = new Date().toISOString();
  const recorded = await core.handle(streams.webhookReplay(replayId), deliveryDecider, {
    type: 'ScheduleReplay',
    replay: {
      replayId,
      webhookId: hook,
      keyId,
      since: at,
      requestedAt: at,
      scheduledAt: at,
      fromPosition: 0,
      toPosition: head,
      baseUrl: '',
      selected: 1,
      capped: false,
      skipped: 0,
      messages: [[head, 'msg_gone', 'search.completed']],
    },
  });
  await projected(recorded.position!);
  const deliveryId = replayedDeliveryIdOf(replayId, 0);
  t.match(core.queries.webhooks.delivery(deliveryId), { status: 'pending', messageId: 'msg_gone' }, 'listed pending');

  const deliverer = createDeliverer({
    eventStore: core.eventStore,
    queries: core.queries,
    handle: core.handle,
    projected,
    sender,
    pepper: core.secrets.keyPepper,
    config: { backoffMs: 100, timeoutMs: 2_000, concurrency: 8, tickMs: 50, giveUpAfterMs: 86_400_000 },
    worker: `test-${randomBytes(3).toString('hex')}`,
  });
  hand.set(deliverer);
  deliverer.start();
  const deadline = Date.now() + 20_000;
  while (core.queries.webhooks.delivery(deliveryId)?.status !== 'failed' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  t.match(core.queries.webhooks.delivery(deliveryId), { status: 'failed', failureReason: 'message_gone' });
  const { events } = await core.eventStore.readStream(streams.webhookReplay(replayId));
  t.same(
    events.map((e) => e.type),
    ['WebhookReplayScheduled', 'WebhookAttemptClaimed', 'WebhookDeliveryGivenUp'],
    'claimed once, then given up (a given-up delivery is never claimed again)',
  );
  t.equal(arrivals, 0, 'nothing was sent');
  t.same(core.queries.webhooks.outbox(), [], 'nothing left to send');
});
