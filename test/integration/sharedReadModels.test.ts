import { join } from 'node:path';
import t from 'tap';
import { streams } from '../../contracts/events.js';
import { usageDecider } from '../../domain/usage/usage.js';
import { allProjections, readModelQueries } from '../../projections/index.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';
import { createCommandHandler } from '../../services/application/commandHandler.js';
import { createProjector } from '../../services/projector/projector.js';
import { removeDir, tempDataDir } from '../support/service.js';

/**
 * A CLI command beside a running service opens the same events.db and read.db. Two projectors following one log
 * into one file must apply every event exactly once, however their batches interleave.
 */
t.test('two projectors on one read-model file apply each event once', async (t) => {
  const dir = tempDataDir('shared-rm');
  t.teardown(() => removeDir(dir));
  const open = () => {
    const eventStore = createSqliteEventStore({ path: join(dir, 'events.db') });
    const readModels = createSqliteReadModelStore(join(dir, 'read.db'));
    const projector = createProjector({ eventStore, readModels, projections: allProjections });
    return { eventStore, readModels, projector, handle: createCommandHandler(eventStore) };
  };
  const a = open(); // the service
  const b = open(); // the CLI command, another connection to both files
  await a.projector.start();
  await b.projector.start();

  const month = '202611';
  const reserve = (p: ReturnType<typeof open>, jobId: string) =>
    p.handle(streams.usage('k1', month), usageDecider, {
      type: 'ReserveQuota',
      keyId: 'k1',
      month,
      jobId,
      monthlyQuota: 0,
      now: '2026-11-21T10:00:00.000Z',
    });
  // both write, in overlapping bursts, so each projector sees batches the other has partly applied
  for (let round = 0; round < 5; round++) {
    await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => reserve(a, `a${round}-${i}`)),
      ...Array.from({ length: 20 }, (_, i) => reserve(b, `b${round}-${i}`)),
    ]);
  }
  const head = await a.eventStore.headPosition();
  // each projector sees the other's appends by polling, on unref'd timers: hold the process open meanwhile
  const keepAlive = setInterval(() => undefined, 1000);
  await a.projector.waitFor(head);
  await b.projector.waitFor(head);
  clearInterval(keepAlive);
  t.equal(head, 200, 'the log holds 200 reservations');
  const counter = readModelQueries(a.readModels).usage.of('k1', month);
  t.equal(counter?.used, 200, 'the usage counter counts each reservation once');
  t.equal(a.readModels.checkpoint('projector'), head, 'one checkpoint, at the head');
  for (const p of [b, a]) {
    await p.projector.stop();
    await p.eventStore.close();
    p.readModels.close();
  }
});
