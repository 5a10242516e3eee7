import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import t from 'tap';
import { createJetStreamJobQueue, jetStreamQueueStats } from '../../services/adapters/jobQueue/jetstream.js';
import { natsConnect, natsServerOrSkip } from '../support/nats.js';
import { jobMessage } from './jobQueueHelpers.js';
import { defaultSettings, jobQueueConformance } from './jobQueueSuite.js';

const servers = await natsServerOrSkip(t);
if (servers) {
  // each case has a stream of its own and spends its time waiting (ack waits, delays, back-offs, lower bounds only):
  // they run side by side, so the file takes about its longest case rather than their sum
  t.test('JetStreamJobQueue › conformance', { jobs: 8 }, async (t) =>
    jobQueueConformance(t, async (settings) => {
      const name = `JOBS_${randomBytes(4).toString('hex')}`;
      const queue = await createJetStreamJobQueue({
        nc: await natsConnect(servers),
        ownsConnection: true,
        stream: name,
        subject: `jobs.${name}`,
        ...settings,
      });
      return { queue, cleanup: () => queue.close() };
    }),
  );

  t.test('jetStreamQueueStats: the depth a process without the queue reads, creating nothing', async (t) => {
    const nc = await natsConnect(servers);
    t.teardown(() => nc.drain());
    const name = `JOBS_${randomBytes(4).toString('hex')}`;
    const read = jetStreamQueueStats(nc, { stream: name });
    t.same(await read(), { pending: 0, inFlight: 0 }, 'no stream yet: an empty queue');
    await t.rejects((await jetstreamManager(nc)).streams.info(name), /stream not found/, 'and reading made none');
    const queue = await createJetStreamJobQueue({ nc, stream: name, subject: `jobs.${name}`, ...defaultSettings });
    t.teardown(() => queue.close());
    for (let i = 0; i < 3; i++) await queue.enqueue(jobMessage());
    // the server counts a consumer's pending messages on its own time after the publish is acknowledged: on a busy
    // machine a read right after the third enqueue can see two (and a message read that fails leaves out its age)
    let seen = await read();
    for (
      let until = Date.now() + 10_000;
      (seen.pending < 3 || seen.oldestPendingMs === undefined) && Date.now() < until;
      seen = await read()
    ) {
      await new Promise((r) => setTimeout(r, 100));
    }
    t.match(seen, { pending: 3, inFlight: 0, oldestPendingMs: Number }, 'three waiting, the oldest wait with them');
    t.same(Object.keys(seen), Object.keys(await queue.stats()), 'what the queue itself reports');
  });
}

if (servers) {
  t.test(
    'a stream made before lanes: its unfiltered consumer is narrowed and its messages still crawled',
    async (t) => {
      const nc = await natsConnect(servers);
      t.teardown(() => nc.drain());
      const name = `JOBS_${randomBytes(4).toString('hex')}`;
      const subject = `jobs.${name}`;
      const jsm = await jetstreamManager(nc);
      // what the adapter made before classes: one subject, one consumer without a filter
      await jsm.streams.add({ name, subjects: [subject], retention: 'workqueue' as never });
      await jsm.consumers.add(name, { durable_name: 'crawlers', ack_policy: 'explicit' as never });
      const old = jobMessage();
      const { jetstream } = await import('@nats-io/jetstream');
      await jetstream(nc).publish(subject, JSON.stringify(old), { msgID: `${old.jobId}:0` });
      const queue = await createJetStreamJobQueue({ nc, stream: name, subject, ...defaultSettings });
      t.teardown(() => queue.close());
      const fresh = jobMessage({ lane: 'bulk' });
      await queue.enqueue(fresh);
      const seen: string[] = [];
      const consumer = queue.consume(
        async (d) => {
          seen.push(d.message.jobId);
          await d.ack();
        },
        { concurrency: 1 },
      );
      for (const until = Date.now() + 10_000; seen.length < 2 && Date.now() < until; ) {
        await new Promise((r) => setTimeout(r, 50));
      }
      await consumer.stop();
      t.same(seen.sort(), [old.jobId, fresh.jobId].sort(), 'the old message and the new one were both delivered');
      t.equal(
        (await jsm.consumers.info(name, 'crawlers')).config.filter_subject,
        subject,
        'narrowed to the old subject',
      );
    },
  );
}
