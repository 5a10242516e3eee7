import t from 'tap';
import { createInProcessJobQueue } from '../../services/adapters/jobQueue/inProcess.js';
import { jobQueueConformance } from './jobQueueSuite.js';

t.test('InProcessJobQueue › conformance', async (t) =>
  jobQueueConformance(t, async (settings) => {
    const queue = createInProcessJobQueue(settings);
    return { queue, cleanup: () => queue.close() };
  }),
);
