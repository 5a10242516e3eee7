import { randomBytes } from 'node:crypto';
import t from 'tap';
import { createJetStreamJobQueue } from '../../services/adapters/jobQueue/jetstream.js';
import { natsConnect, natsServerOrSkip } from '../support/nats.js';
import { jobQueueConformance } from './jobQueueSuite.js';

const servers = await natsServerOrSkip(t);
if (servers) {
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
