import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import t from 'tap';
import { createNatsObjectBlobStore } from '../../services/adapters/blobStore/natsObject.js';
import { createNatsKvRateLimiter } from '../../services/adapters/rateLimiter/natsKv.js';
import { natsConnect, natsServerOrSkip } from '../support/nats.js';
import { blobStoreConformance } from './blobStoreSuite.js';
import { rateLimiterConformance } from './rateLimiterSuite.js';

const servers = await natsServerOrSkip(t);
if (servers) {
  const bucket = `rate_${randomBytes(4).toString('hex')}`;

  t.test('NatsKvRateLimiter › conformance', (t) =>
    rateLimiterConformance(t, async () => {
      const limiter = await createNatsKvRateLimiter({ nc: await natsConnect(servers), ownsConnection: true, bucket });
      return { limiter, cleanup: () => limiter.close() };
    }),
  );

  t.test('NatsKvRateLimiter › two api processes share one count', async (t) => {
    const a = await createNatsKvRateLimiter({ nc: await natsConnect(servers), ownsConnection: true, bucket });
    const b = await createNatsKvRateLimiter({ nc: await natsConnect(servers), ownsConnection: true, bucket });
    t.teardown(async () => {
      await a.close();
      await b.close();
    });
    // pinned inside one minute, so the window cannot turn over mid-test
    const key = `shared-${randomBytes(4).toString('hex')}`;
    const before = Math.floor(Date.now() / 60_000);
    const decisions = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).hit(key, 10)));
    const allowed = decisions.filter((d) => d.allowed).length;
    if (Math.floor(Date.now() / 60_000) === before) t.equal(allowed, 10, 'exactly the limit within one minute');
    else t.ok(allowed >= 10 && allowed <= 20, `allowed ${allowed} of 30 hits across a minute boundary`);
  });

  // reads are counted with hitNow (docs/api.md#limits): here first, shared in the background
  t.test(
    'NatsKvRateLimiter › hitNow shares its count: the fleet overshoots by what the others admitted before they shared',
    async (t) => {
      const a = await createNatsKvRateLimiter({
        nc: await natsConnect(servers),
        ownsConnection: true,
        bucket,
        shareEveryMs: 20,
      });
      const b = await createNatsKvRateLimiter({
        nc: await natsConnect(servers),
        ownsConnection: true,
        bucket,
        shareEveryMs: 20,
      });
      t.teardown(async () => {
        await a.close();
        await b.close();
      });
      const key = `now-${randomBytes(4).toString('hex')}`;
      const before = Math.floor(Date.now() / 60_000);
      const fromA = Array.from({ length: 12 }, () => a.hitNow(key, 10)).filter((d) => d.allowed).length;
      // the exact count sees what hitNow counted once it is shared: poll it with a limit the count has reached
      const shared = async (limiter: typeof a, limit: number) => {
        for (let i = 0; i < 200; i++) {
          if (!(await limiter.hit(key, limit)).allowed) return true;
          await new Promise((r) => setTimeout(r, 10));
        }
        return false;
      };
      t.ok(await shared(b, 10), "a's count reached the shared store, where b's exact count refuses past it");
      const first = b.hitNow(key, 10);
      await new Promise((r) => setTimeout(r, 200));
      const second = b.hitNow(key, 10);
      if (Math.floor(Date.now() / 60_000) !== before)
        return t.pass('the minute turned over mid-test: counts restarted');
      t.equal(fromA, 10, 'a admits exactly the limit on its own');
      t.ok(first.allowed, "b's first read is decided before b has read the shared count: the overshoot");
      t.notOk(second.allowed, 'once b has shared, it knows the fleet is past the limit and refuses');
    },
  );

  t.test('NatsKvRateLimiter › hitNow keeps answering when NATS is gone', async (t) => {
    const nc = await natsConnect(servers);
    const limiter = await createNatsKvRateLimiter({ nc, bucket, shareEveryMs: 5 });
    const key = `gone-${randomBytes(4).toString('hex')}`;
    t.ok(limiter.hitNow(key, 3).allowed, 'counted while connected');
    await nc.close();
    await new Promise((r) => setTimeout(r, 50));
    const after = Array.from({ length: 4 }, () => limiter.hitNow(key, 3));
    t.same(
      after.map((d) => d.allowed),
      [true, true, false, false],
      'still decided, and still counted here: the limit holds within the process',
    );
    await limiter.close();
  });

  t.test('NatsObjectBlobStore › conformance', (t) =>
    blobStoreConformance(t, async () => {
      const store = await createNatsObjectBlobStore({
        nc: await natsConnect(servers),
        ownsConnection: true,
        bucket: `raw_${randomBytes(4).toString('hex')}`,
      });
      return { store, cleanup: () => (store as typeof store & { close(): Promise<void> }).close() };
    }),
  );
  // The library's own read makes a consumer per read that lingers for minutes: a burst of reads (a replay's bodies
  // rebuilt from their results) once filled the stream's consumers, and every read after failed, so finished jobs
  // read "running" (docs/distributed.md#the-other-nats-adapters)
  t.test('NatsObjectBlobStore › 1,200 reads in a row all answer, and leave no consumer behind', async (t) => {
    const bucket = `raw_${randomBytes(4).toString('hex')}`;
    const nc = await natsConnect(servers);
    const store = await createNatsObjectBlobStore({ nc, ownsConnection: true, bucket });
    t.teardown(() => (store as typeof store & { close(): Promise<void> }).close());
    // several chunks (the library cuts objects in 128 kB chunks)
    const body = randomBytes(300_000).toString('hex');
    const ref = await store.put('results/many.json', body);
    let same = 0;
    for (let i = 0; i < 1_200; i += 8) {
      const got = await Promise.all(Array.from({ length: 8 }, () => store.get(ref.key)));
      same += got.filter((b) => b?.toString('utf8') === body).length;
    }
    t.equal(same, 1_200, 'every read answered the whole object');
    const jsm = await jetstreamManager(nc);
    t.equal((await jsm.streams.info(`OBJ_${bucket}`)).state.consumer_count, 0, 'no consumer left on the bucket');
    t.equal(await store.get('results/absent.json'), undefined, 'an object never written is absent, not an error');
  });
}
