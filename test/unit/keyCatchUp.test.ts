import { join } from 'node:path';
import t, { type Test } from 'tap';
import { allProjections, readModelQueries } from '../../projections/index.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createMemoryRateLimiter } from '../../services/adapters/rateLimiter/memory.js';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';
import { createServer } from '../../services/api/server.js';
import { createCommandHandler } from '../../services/application/commandHandler.js';
import { createKeyCommands } from '../../services/application/keys.js';
import { composeApi } from '../../services/compose/application.js';
import { loadConfig } from '../../services/config/config.js';
import { createLocationResolver } from '../../services/geo/locations.js';
import { createCatchUp } from '../../services/projector/catchUp.js';
import { createProjector } from '../../services/projector/projector.js';
import { apiBlobStore } from '../support/apiBlobStore.js';
import { removeDir, tempDataDir } from '../support/service.js';

const pepper = 'pepper-pepper-pepper';
/**
 * Two api processes over one event log, as in distributed mode: "A" mints keys, "B" has its own read models fed by a
 * subscription that sees A's events only on its next poll (a second handle on the same SQLite log, polling every
 * 400 ms). A key minted on A is used on B at once.
 */
const twoApis = async (t: Test, catchUp: boolean) => {
  const dir = tempDataDir('serp-catchup');
  const storeA = createSqliteEventStore({ path: join(dir, 'events.db'), pollIntervalMs: 20 });
  const storeB = createSqliteEventStore({ path: join(dir, 'events.db'), pollIntervalMs: 400 });
  const readModels = createSqliteReadModelStore(join(dir, 'read-b.db'));
  const projector = createProjector({ eventStore: storeB, readModels, projections: allProjections });
  await projector.start();
  const queries = readModelQueries(readModels);
  const handle = createCommandHandler(storeB);
  const config = loadConfig({}, { dataDir: dir });
  const keysOnA = createKeyCommands({ handle: createCommandHandler(storeA), pepper, tiers: config.tiers });
  const locations = createLocationResolver(dir);
  const projected = (position: number) => projector.waitFor(position);
  const app = await createServer(
    composeApi(
      {
        eventStore: storeB,
        queries,
        handle,
        secrets: { keyPepper: pepper, adminToken: 'adm_test_token_0123', linkSecret: 'link-secret-0123' },
        projected,
        blobStore: apiBlobStore,
        rateLimiter: createMemoryRateLimiter(),
        locations,
        ...(catchUp ? { catchUp: createCatchUp(() => storeB.headPosition(), projected) } : {}),
      },
      config,
    ),
    { settings: config, logger: false },
  );
  t.teardown(async () => {
    await app.close();
    locations.close();
    await projector.stop();
    readModels.close();
    await storeA.close();
    await storeB.close();
    removeDir(dir);
  });
  const usageOnB = async (key: string) =>
    (await app.inject({ method: 'GET', url: '/v1/usage', headers: { 'x-api-key': key } })).statusCode;
  return { keysOnA, usageOnB, queries };
};

t.test('a key minted on one api process is accepted on another at once', async (t) => {
  const { keysOnA, usageOnB, queries } = await twoApis(t, true);
  for (let i = 0; i < 5; i++) {
    const created = await keysOnA.create({ tier: 'free' });
    t.notOk(queries.keys.byId(created.keyId), `key ${i}: not yet in B's read models when used`);
    t.equal(await usageOnB(created.key), 200, `key ${i}: B answers 200 on its first request`);
  }
  t.equal(await usageOnB('sk_never_minted_0000000000000000'), 401, 'a key nobody minted is still a 401');
});

t.test('without catching up, the same request is a 401 until B has polled', async (t) => {
  const { keysOnA, usageOnB } = await twoApis(t, false);
  const created = await keysOnA.create({ tier: 'free' });
  t.equal(await usageOnB(created.key), 401, 'what a client saw before: the key minted on A refused on B');
});

t.test('createCatchUp › overlapping calls share rounds: one in flight, one queued', async (t) => {
  let heads = 0;
  let release: (() => void) | undefined;
  const catchUp = createCatchUp(
    async () => {
      heads++;
      return heads;
    },
    () => new Promise<void>((resolve) => (release = resolve)),
  );
  const first = catchUp();
  await new Promise((r) => setImmediate(r));
  const later = Array.from({ length: 50 }, () => catchUp());
  t.equal(heads, 1, 'one head read for the round in flight');
  release?.();
  await first;
  await new Promise((r) => setImmediate(r));
  t.equal(heads, 2, 'the 50 calls made meanwhile share one more round, which starts after they arrived');
  release?.();
  await Promise.all(later);
  t.equal(heads, 2);
});

t.test(
  'createCatchUp › a lagging projector or an unanswering store does not hold the request past the bound',
  async (t) => {
    const stuck = createCatchUp(
      async () => 10,
      () => new Promise<void>(() => {}),
      50,
    );
    const t0 = Date.now();
    await stuck();
    t.ok(Date.now() - t0 < 1_000, 'resolved after the bound');
    const failing = createCatchUp(
      async () => {
        throw new Error('timeout');
      },
      async () => {},
      50,
    );
    await t.resolves(failing(), 'a store that fails: the lookup goes on with what the process has');
  },
);
