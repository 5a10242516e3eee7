import type { Test } from 'tap';
import type { JobMessage } from '../../contracts/jobMessage.js';
import { createGate, createRecorder, jobMessage, sleep, type WithQueue } from './jobQueueHelpers.js';

const ACK_WAIT_MS = 600;

/** failures, part of jobQueueConformance: stalls, stale acks, throwing handlers, max attempts, term */
export const jobQueueFailureConformance = (t: Test, withQueue: WithQueue) => {
  t.test('stall › a delivery neither acked nor extended is redelivered after ack wait', (t) =>
    withQueue(t, { ackWaitMs: ACK_WAIT_MS }, async (queue, consume) => {
      await queue.enqueue(jobMessage());
      const rec = createRecorder(async (d) => {
        if (d.attempt === 1) {
          // a stalled worker: it holds the message and says nothing well past ack wait
          await sleep(ACK_WAIT_MS * 3);
          return;
        }
        await d.ack();
      });
      consume(rec.handler, { concurrency: 1 });
      await rec.until((s) => s.length >= 2, 'the redelivery');
      t.same(
        rec.seen.map((r) => r.delivery.attempt),
        [1, 2],
      );
      t.ok(rec.seen[1].at - rec.seen[0].at >= ACK_WAIT_MS, 'not before ack wait ran out');
    }),
  );

  t.test('working › heartbeats keep a long delivery from being redelivered', (t) =>
    withQueue(t, { ackWaitMs: ACK_WAIT_MS }, async (queue, consume) => {
      await queue.enqueue(jobMessage());
      const rec = createRecorder(async (d) => {
        for (let i = 0; i < 8; i += 1) {
          await sleep(ACK_WAIT_MS / 4);
          await d.working();
        }
        await d.ack();
      });
      consume(rec.handler, { concurrency: 2 });
      await sleep(ACK_WAIT_MS * 4);
      t.equal(rec.seen.length, 1, 'one delivery for a job twice as long as ack wait');
    }),
  );

  t.test('stale › the late ack of a redelivered message is ignored', (t) =>
    withQueue(t, { ackWaitMs: ACK_WAIT_MS }, async (queue, consume) => {
      await queue.enqueue(jobMessage());
      const secondHeld = createGate();
      const rec = createRecorder(async (d) => {
        if (d.attempt === 1) {
          await rec.until((s) => s.length >= 2, 'the redelivery');
          await d.ack();
          secondHeld.open();
        } else if (d.attempt === 2) {
          await secondHeld.opened;
          await d.nak(0);
        } else await d.ack();
      });
      consume(rec.handler, { concurrency: 2 });
      await rec.until((s) => s.length >= 3, 'a third attempt after the current delivery nak’d');
      t.same(
        rec.seen.map((r) => r.delivery.attempt),
        [1, 2, 3],
        'the stale ack did not remove the message',
      );
    }),
  );

  t.test('stale › the late nak of a redelivered message does not deliver it again', (t) =>
    withQueue(t, { ackWaitMs: ACK_WAIT_MS }, async (queue, consume) => {
      await queue.enqueue(jobMessage());
      const rec = createRecorder(async (d) => {
        if (d.attempt === 1) {
          await rec.until((s) => s.length >= 2, 'the redelivery');
          await d.nak(0);
          return;
        }
        await sleep(200);
        await d.ack();
      });
      consume(rec.handler, { concurrency: 2 });
      await rec.until((s) => s.length >= 2, 'the redelivery');
      await sleep(ACK_WAIT_MS * 2);
      t.equal(rec.seen.length, 2, 'no third delivery');
    }),
  );

  t.test('throw › a handler that throws is retried after the backoff', (t) =>
    withQueue(t, { backoffMs: [300, 600] }, async (queue, consume) => {
      await queue.enqueue(jobMessage());
      const rec = createRecorder(async (d) => {
        if (d.attempt < 3) throw new Error('transient');
        await d.ack();
      });
      consume(rec.handler);
      await rec.until((s) => s.length >= 3, 'three attempts');
      const [a, b, c] = rec.seen.map((r) => r.at);
      t.same(
        rec.seen.map((r) => r.delivery.attempt),
        [1, 2, 3],
      );
      t.ok(b - a >= 300, 'first backoff respected');
      t.ok(c - b >= 600, 'second backoff respected');
    }),
  );

  for (const how of ['nak', 'throw', 'stall'] as const) {
    t.test(`max attempts › after the last attempt (${how}) onExhausted is called exactly once`, (t) =>
      withQueue(t, { maxDeliver: 3, ackWaitMs: 300 }, async (queue, consume) => {
        const message = jobMessage();
        await queue.enqueue(message);
        const exhausted: Array<[JobMessage, number]> = [];
        const rec = createRecorder(async (d) => {
          if (how === 'nak') await d.nak(0);
          if (how === 'throw') throw new Error('always fails');
        });
        consume(rec.handler, { onExhausted: (m, attempts) => void exhausted.push([m, attempts]) });
        await rec.until((s) => s.length >= 3, 'three attempts');
        const deadline = Date.now() + 15_000;
        while (exhausted.length === 0 && Date.now() < deadline) await sleep(20);
        await sleep(900);
        t.same(
          rec.seen.map((r) => r.delivery.attempt),
          [1, 2, 3],
          'never a fourth delivery',
        );
        t.same(exhausted, [[message, 3]]);
      }),
    );
  }

  t.test('term › a termed message is never delivered again and is not reported exhausted', (t) =>
    withQueue(t, { ackWaitMs: 300 }, async (queue, consume) => {
      await queue.enqueue(jobMessage());
      let exhausted = 0;
      const rec = createRecorder((d) => d.term('bad input'));
      consume(rec.handler, {
        onExhausted: () => {
          exhausted += 1;
        },
      });
      await rec.until((s) => s.length >= 1, 'the delivery');
      await sleep(900);
      t.equal(rec.seen.length, 1);
      t.equal(exhausted, 0);
    }),
  );
};
