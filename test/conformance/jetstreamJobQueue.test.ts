import { randomBytes } from 'node:crypto';
import t from 'tap';
import { createJetStreamJobQueue } from '../../services/adapters/jobQueue/jetstream.js';
import { natsConnect, natsServers, natsUnavailable } from '../support/nats.js';
import { jobQueueConformance } from './jobQueueSuite.js';

const unavailable = natsUnavailable();
if (unavailable) {
  console.log(`# skipping: ${unavailable}`);
  t.pass('skipped: no nats-server here');
} else {
  const servers = await natsServers(t, 1);
  t.test('JetStreamJobQueue › conformance', async (t) =>
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
}
