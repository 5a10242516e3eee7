import t from 'tap';
import { SearchRequest } from '../../contracts/search.js';
import { allProjections, READ_MODELS_VERSION } from '../../projections/index.js';
import { composeApplication } from '../../services/compose/application.js';
import { openCore } from '../../services/compose/embedded/core.js';
import { loadConfig } from '../../services/config/config.js';
import { rebuildReadModels } from '../../services/projector/projector.js';
import { removeDir, tempDataDir } from '../support/service.js';

t.test('projections rebuild › replaying the log yields identical read models', async (t) => {
  const dataDir = tempDataDir('rebuild');
  t.teardown(() => removeDir(dataDir));
  const config = loadConfig({}, { dataDir });
  const core = await openCore(config);
  const { keys, searches } = composeApplication(core, config);
  const created = await keys.create({ tier: 'free', label: 'a' });
  const other = await keys.create({ tier: 'pro' });
  await keys.changeLimits(other.keyId, { monthlyQuota: 7 });
  await core.projector.waitFor(await core.eventStore.headPosition());
  const key = core.queries.keys.byId(created.keyId)!;
  // normalised as every surface's validation leaves it (defaults in the schema's order), so a replay reads the same
  const request = SearchRequest.parse({ keyword: 'coffee' });
  for (let i = 0; i < 5; i++) await searches.submit(key, { ...request, keyword: `coffee ${i}` }, {});
  await keys.revoke(created.keyId);
  await core.projector.waitFor(await core.eventStore.headPosition());

  const before = core.readModels.dump();
  t.equal(
    before.length,
    11,
    "two keys, five jobs, one usage counter, the key's day, the service's hour (the dashboard's counts) and the lanes' hour",
  );
  await core.projector.stop();
  const r = await rebuildReadModels(core.eventStore, core.readModels, allProjections);
  t.equal(r.position, await core.eventStore.headPosition(), 'replayed to the head of the log');
  t.same(core.readModels.dump(), before, 'byte for byte the same documents');
  await core.close();
});

t.test('read models written under another shape are rebuilt from the log once at start', async (t) => {
  const dataDir = tempDataDir('rebuild-version');
  t.teardown(() => removeDir(dataDir));
  const config = loadConfig({}, { dataDir });
  const first = await openCore(config);
  await composeApplication(first, config).keys.create({ tier: 'free', label: 'a' });
  await first.projector.waitFor(await first.eventStore.headPosition());
  const before = first.readModels.dump();
  // what an older version left: its own shape number and a document the current projections never write
  first.readModels.commit([{ view: 'oldView', id: 'x', doc: { stale: true } }], 'read-models-version', 1);
  await first.close();

  const again = await openCore(loadConfig({}, { dataDir }));
  t.same(again.readModels.dump(), before, 'the stale document is gone and the current views are back');
  t.equal(again.readModels.checkpoint('read-models-version'), READ_MODELS_VERSION);
  await again.close();

  const third = await openCore(loadConfig({}, { dataDir }));
  third.readModels.commit([{ view: 'oldView', id: 'y', doc: { kept: true } }], 'unrelated', 1);
  await third.close();
  const fourth = await openCore(loadConfig({}, { dataDir }));
  t.ok(
    fourth.readModels.dump().some((d) => d.view === 'oldView'),
    'same shape: nothing is rebuilt (the document written after stays)',
  );
  await fourth.close();
});
