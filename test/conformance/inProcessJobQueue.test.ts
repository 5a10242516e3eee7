import t from 'tap';
import { createInProcessJobQueue } from '../../services/adapters/jobQueue/inProcess.js';
import { jobQueueConformance } from './jobQueueSuite.js';

// each case has a queue of its own and spends its time waiting (ack waits, delays, back-offs, lower bounds only): they
// run side by side, so the file takes about its longest case rather than their sum
t.test('InProcessJobQueue › conformance', { jobs: 8 }, async (t) =>
  jobQueueConformance(t, async (settings) => {
    const queue = createInProcessJobQueue(settings);
    return { queue, cleanup: () => queue.close() };
  }),
);
