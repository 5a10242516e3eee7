import { parentPort, workerData } from 'node:worker_threads';
import { atStart, composeProjectorThread } from '../compose/distributed/stores.js';
import { runInBackground } from '../threads/nice.js';
import type { FromProjector, ProjectorThreadSetup, ToProjector } from '../threads/projectorThread.js';
import { armThreadFaults, faultCounter, forwardThreadFaults, injectedFault } from '../threads/threadFaults.js';

/**
 * A cluster api's projector thread (threads/projectorThread.ts, docs/distributed.md#roles): the read models'
 * projector as the process would run it inline, over a NATS connection, an event store, a blob store (reads only: it
 * never appends) and a read-model connection of its own, to the same SQLite file the HTTP thread reads.
 */
// below the event loop that answers HTTP, as the pipeline and parse threads are (threads/nice.ts); Linux only
runInBackground();
const port = parentPort!;
const post = (m: FromProjector) => port.postMessage(m);
const { config, dist } = workerData as ProjectorThreadSetup;
// a thread this thread starts would be counted and logged on the main thread (threadFaults.ts)
forwardThreadFaults((thread, cause) => post({ type: 'threadFault', thread, cause }));
armThreadFaults(config.chaosFaults);
const projectorFault = faultCounter('projector');

/**
 * The projected position, told to the main thread once for many: while a backlog drains this thread commits many
 * times a second, and a message each would cost it a good part of its time (as the pipeline thread found,
 * docs/benchmarks.md#webhook-backlog). The newest is sent on the next turn: a read waiting on it waits a turn at most.
 */
let newest = 0;
let armed = false;
let caughtUp = false;
const tellProjected = (position: number) => {
  newest = Math.max(newest, position);
  if (caughtUp && projectorFault()) {
    // a real fault (SERP_CHAOS_FAULTS): an error nothing catches ends this thread, after its commit
    setImmediate(() => {
      throw injectedFault('projector');
    });
  }
  if (armed) return;
  armed = true;
  setImmediate(() => {
    armed = false;
    post({ type: 'projected', position: newest });
  });
};

const start = async () => {
  let closing: Promise<void> | undefined;
  let closeSide: () => Promise<void> = async () => undefined;
  const close = () => {
    closing ??= closeSide().then(() => port.close());
    return closing;
  };
  port.on('message', (m: ToProjector) => {
    if (m.type === 'close') void close();
  });
  try {
    const side = await composeProjectorThread(config, dist, tellProjected);
    closeSide = side.close;
    await atStart('catch-up', () => side.projector.start());
    caughtUp = true;
    post({ type: 'ready', position: side.checkpoint() });
  } catch (err) {
    post({ type: 'failed', error: { message: (err as Error)?.message ?? String(err) } });
    await close();
  }
};

void start();
