import type { Test } from 'tap';
import type { JobMessage } from '../../contracts/jobMessage.js';
import { jobQueueFailureConformance } from './jobQueueFailureSuite.js';
import {
  type ConsumeHelper,
  createGate,
  createRecorder,
  type JobQueueFixture,
  type JobQueueSettings,
  jobMessage,
  sleep,
  WAIT_MS,
  type WithQueue,
} from './jobQueueHelpers.js';

export type { JobQueueFixture, JobQueueSettings } from './jobQueueHelpers.js';

export type MakeJobQueue = (settings: JobQueueSettings) => Promise<JobQueueFixture>;

/** settings used unless a test needs others; ack wait is long enough for a loaded machine to heartbeat in time */
export const defaultSettings: JobQueueSettings = { ackWaitMs: 600, maxDeliver: 5, dedupeWindowMs: 60_000 };

export type { ConsumeHelper, WithQueue } from './jobQueueHelpers.js';

/**
 * The one suite every JobQueue adapter runs. Timing assertions are lower bounds only ("no sooner than"), with
 * generous waits, so a loaded machine makes them slower, never red.
 */
export const jobQueueConformance = (t: Test, makeQueue: MakeJobQueue) => {
  const withQueue: WithQueue = async (t, settings, body) => {
    const fixture = await makeQueue({ ...defaultSettings, ...settings });
    const consumers: Array<{ stop(): Promise<void> }> = [];
    t.teardown(async () => {
      await Promise.all(consumers.map((c) => c.stop()));
      await fixture.cleanup();
    });
    const consume: ConsumeHelper = (handler, options) => {
      const consumer = fixture.queue.consume(handler, { concurrency: 1, ...options });
      consumers.push(consumer);
      return consumer;
    };
    await body(fixture.queue, consume);
  };

  t.test('ack › an acked message is delivered once, with attempt 1', (t) =>
    withQueue(t, {}, async (queue, consume) => {
      const message = jobMessage();
      t.same(await queue.enqueue(message), { duplicate: false });
      const rec = createRecorder((d) => d.ack());
      consume(rec.handler);
      await rec.until((s) => s.length >= 1, 'the delivery');
      await sleep(defaultSettings.ackWaitMs * 2);
      t.equal(rec.seen.length, 1, 'never redelivered after ack');
      t.same(rec.seen[0].delivery.message, message, 'the message arrives intact');
      t.equal(rec.seen[0].delivery.attempt, 1);
    }),
  );

  t.test('stats › pending and in-flight counts follow the messages, with the oldest wait', (t) =>
    withQueue(t, {}, async (queue, consume) => {
      t.match(await queue.stats(), { pending: 0, inFlight: 0 }, 'an empty queue');
      await queue.enqueue(jobMessage());
      await queue.enqueue(jobMessage());
      await sleep(20);
      const waiting = await queue.stats();
      t.match(waiting, { pending: 2, inFlight: 0 }, 'two wait');
      t.ok((waiting.oldestPendingMs ?? -1) >= 0, `the oldest has waited ${waiting.oldestPendingMs} ms`);
      const gate = createGate();
      const rec = createRecorder(async (d) => {
        await gate.opened;
        await d.ack();
      });
      consume(rec.handler);
      await rec.until((s) => s.length >= 1, 'the first delivery');
      t.match(await queue.stats(), { pending: 1, inFlight: 1 }, 'one out, one waiting');
      gate.open();
      await rec.until((s) => s.length >= 2, 'the second delivery');
      const deadline = Date.now() + WAIT_MS;
      while ((await queue.stats()).inFlight > 0 && Date.now() < deadline) await sleep(20);
      t.match(await queue.stats(), { pending: 0, inFlight: 0 }, 'both acked');
    }),
  );

  t.test('classes › each lane has crawler slots of its own: a bulk backlog never holds a live message back', (t) =>
    withQueue(t, {}, async (queue, consume) => {
      const gate = createGate();
      const rec = createRecorder(async (d) => {
        if (d.message.lane === 'bulk') await gate.opened;
        await d.ack();
      });
      consume(rec.handler, { concurrency: { live: 1, bulk: 1, 'live.first': 1 } });
      for (let i = 0; i < 3; i++) await queue.enqueue(jobMessage({ lane: 'bulk' }));
      await rec.until((s) => s.length >= 1, 'the first bulk delivery');
      const live = jobMessage({ lane: 'live' });
      const first = jobMessage({ lane: 'live', first: true });
      await queue.enqueue(live);
      await queue.enqueue(first);
      await rec.until((s) => s.length >= 3, 'the live and express deliveries');
      t.same(
        rec.seen
          .slice(1)
          .map((r) => r.delivery.message.jobId)
          .sort(),
        [live.jobId, first.jobId].sort(),
        'the live message and the express one went while bulk held its only slot',
      );
      const during = await queue.stats();
      t.match(during.classes?.bulk, { pending: 2 }, 'two bulk messages wait for their lane');
      gate.open();
      await rec.until((s) => s.length >= 5, 'the rest of bulk');
    }),
  );

  t.test('classes › a class a consumer has no slots for is left to others', (t) =>
    withQueue(t, {}, async (queue, consume) => {
      const rec = createRecorder((d) => d.ack());
      consume(rec.handler, { concurrency: { live: 1 } });
      await queue.enqueue(jobMessage({ lane: 'scheduled' }));
      const live = jobMessage();
      await queue.enqueue(live);
      await rec.until((s) => s.length >= 1, 'the live delivery');
      await sleep(300);
      t.same(
        rec.seen.map((r) => r.delivery.message.jobId),
        [live.jobId],
        'only the live message was delivered',
      );
      t.match((await queue.stats()).classes?.scheduled, { pending: 1 }, 'the scheduled one still waits');
    }),
  );

  t.test('order › messages are delivered in enqueue order', (t) =>
    withQueue(t, {}, async (queue, consume) => {
      const messages = Array.from({ length: 10 }, () => jobMessage());
      for (const m of messages) await queue.enqueue(m);
      const rec = createRecorder((d) => d.ack());
      consume(rec.handler);
      await rec.until((s) => s.length >= 10, 'ten deliveries');
      t.same(
        rec.seen.map((r) => r.delivery.message.jobId),
        messages.map((m) => m.jobId),
      );
    }),
  );

  t.test('delay › a delayed message waits, and does not hold back the ones behind it', (t) =>
    withQueue(t, {}, async (queue, consume) => {
      const delayed = jobMessage();
      const enqueuedAt = Date.now();
      await queue.enqueue(delayed, { delayMs: 400 });
      const prompt = jobMessage();
      await queue.enqueue(prompt);
      const rec = createRecorder((d) => d.ack());
      consume(rec.handler);
      await rec.until((s) => s.length >= 2, 'both deliveries');
      t.same(
        rec.seen.map((r) => r.delivery.message.jobId),
        [prompt.jobId, delayed.jobId],
      );
      t.ok(rec.seen[1].at - enqueuedAt >= 400, 'the delayed one came no sooner than its delay');
    }),
  );

  t.test('nak › a nak with a delay redelivers no sooner than the delay, as the next attempt', (t) =>
    withQueue(t, {}, async (queue, consume) => {
      await queue.enqueue(jobMessage());
      let nakAt = 0;
      const rec = createRecorder(async (d) => {
        if (d.attempt === 1) {
          nakAt = Date.now();
          await d.nak(500);
        } else await d.ack();
      });
      consume(rec.handler);
      await rec.until((s) => s.length >= 2, 'the redelivery');
      t.same(
        rec.seen.map((r) => r.delivery.attempt),
        [1, 2],
      );
      t.ok(rec.seen[1].at - nakAt >= 500, `redelivered after ${rec.seen[1].at - nakAt} ms`);
    }),
  );

  t.test('dedupe › the same job id and dispatch within the window is enqueued once', (t) =>
    withQueue(t, {}, async (queue, consume) => {
      const message = jobMessage();
      t.same(await queue.enqueue(message), { duplicate: false });
      t.same(await queue.enqueue({ ...message, keyId: 'changed' }), { duplicate: true }, 'same id: duplicate');
      t.same(await queue.enqueue({ ...message, dispatch: 1 }), { duplicate: false }, 'a re-dispatch is not');
      const rec = createRecorder((d) => d.ack());
      consume(rec.handler);
      await rec.until((s) => s.length >= 2, 'two deliveries');
      await sleep(300);
      t.same(
        rec.seen.map((r) => [r.delivery.message.dispatch, r.delivery.message.keyId]),
        [
          [0, 'key-1'],
          [1, 'key-1'],
        ],
      );
    }),
  );

  t.test('dedupe › after the window the same id is accepted again', (t) =>
    withQueue(t, { dedupeWindowMs: 200 }, async (queue) => {
      const message = jobMessage();
      await queue.enqueue(message);
      await sleep(600);
      t.same(await queue.enqueue(message), { duplicate: false });
    }),
  );

  t.test('enqueue › a malformed message is refused', (t) =>
    withQueue(t, {}, async (queue) => {
      await t.rejects(queue.enqueue({ jobId: 'x' } as unknown as JobMessage));
    }),
  );

  t.test('concurrency › never more handlers at once than the bound, and the bound is used', (t) =>
    withQueue(t, {}, async (queue, consume) => {
      for (let i = 0; i < 20; i += 1) await queue.enqueue(jobMessage());
      let running = 0;
      let maxRunning = 0;
      const rec = createRecorder(async (d) => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await sleep(30);
        running -= 1;
        await d.ack();
      });
      consume(rec.handler, { concurrency: 3 });
      await rec.until((s) => s.length >= 20, 'twenty deliveries');
      await sleep(100);
      t.equal(maxRunning, 3);
      t.equal(new Set(rec.seen.map((r) => r.delivery.message.jobId)).size, 20, 'each message once');
    }),
  );

  t.test('stop › drains the handlers in flight and takes nothing new', (t) =>
    withQueue(t, {}, async (queue, consume) => {
      const messages = Array.from({ length: 5 }, () => jobMessage());
      for (const m of messages) await queue.enqueue(m);
      const gate = createGate();
      let finished = 0;
      const first = createRecorder(async (d) => {
        await gate.opened;
        finished += 1;
        await d.ack();
      });
      const consumer = consume(first.handler, { concurrency: 2 });
      await first.until((s) => s.length >= 2, 'two in flight');
      let stopped = false;
      const stopping = consumer.stop().then(() => {
        stopped = true;
      });
      await sleep(100);
      t.notOk(stopped, 'stop waits while handlers run');
      gate.open();
      await stopping;
      t.equal(finished, 2, 'both handlers finished before stop resolved');
      t.equal(first.seen.length, 2, 'the stopped consumer took nothing new');

      const second = createRecorder((d) => d.ack());
      consume(second.handler);
      await second.until((s) => s.length >= 3, 'the rest');
      await sleep(defaultSettings.ackWaitMs * 2);
      t.same(
        second.seen.map((r) => r.delivery.message.jobId),
        messages.slice(2).map((m) => m.jobId),
        'another consumer gets exactly the messages left, and none acked during the drain',
      );
    }),
  );

  jobQueueFailureConformance(t, withQueue);
};
