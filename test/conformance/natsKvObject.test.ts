import { randomBytes } from 'node:crypto';
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
}
