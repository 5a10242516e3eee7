import t from 'tap';
import { SearchRequest } from '../../contracts/search.js';
import { composeApplication } from '../../services/compose/application.js';
import { openCore } from '../../services/compose/embedded/core.js';
import { loadConfig } from '../../services/config/config.js';
import { httpCrawlerFor, jobFor } from '../support/crawlerHarness.js';
import { startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { removeDir, tempDataDir } from '../support/service.js';

/**
 * A location is resolved once, at submit, where the geotargets are (docs/locations.md): the job records what it
 * resolved to, the dispatcher hands it to the crawler with the job, and the crawl targets with it as is, without
 * asking for the location again (in embedded mode that was a message to the HTTP thread for every crawl).
 */
t.test('targeting › resolved at submit, recorded with the job', async (t) => {
  const dir = tempDataDir('targeting-submit');
  const core = await openCore(loadConfig({}, { dataDir: dir }));
  t.teardown(async () => {
    await core.close();
    removeDir(dir);
  });
  const resolved = { location: 'Austin,Texas,United States', gl: 'us', hl: 'en', uule: 'w+CAIQICIaQXVzdGlu' };
  const app = composeApplication(
    { ...core, resolveTargeting: (r) => (r.location ? resolved : {}) },
    loadConfig({ SERP_CACHE_TTL_S: '0' }),
  );
  const created = await app.keys.create({ tier: 'pro' });
  await core.projector.waitFor(await core.eventStore.headPosition());
  const key = core.queries.keys.byId(created.keyId)!;
  const located = await app.searches.submit(
    key,
    SearchRequest.parse({ keyword: 'coffee', location: 'Austin, TX' }),
    {},
  );
  const plain = await app.searches.submit(key, SearchRequest.parse({ keyword: 'tea' }), {});
  const submitted = async (jobId: string) =>
    (await core.eventStore.readStream(`searchJob-${jobId}`)).events[0]?.data as { targeting?: unknown };
  t.same((await submitted(located.jobId)).targeting, resolved, 'the located search records what it resolved to');
  t.equal((await submitted(plain.jobId)).targeting, undefined, 'a search without a location records none');
});

t.test('targeting › a crawl takes it from its job', { skip: fixturesMissing('serp') }, async (t) => {
  const google = await startFakeGoogle({});
  t.teardown(() => google.close());
  const { crawler } = httpCrawlerFor(google.origin, {
    deps: {
      resolveTargeting: () => {
        throw new Error('the crawl asked for the location again');
      },
    },
  });
  t.teardown(() => crawler.close());
  const job = {
    ...jobFor({ keyword: 'carried', location: 'Austin, TX', depth: 10 }),
    targeting: { location: 'Austin,Texas,United States', gl: 'us', hl: 'en', uule: 'w+CAIQICIaQXVzdGlu' },
  };
  const outcome = await crawler.crawl(job, { heartbeat: () => undefined });
  t.equal(outcome.status, 'done', 'crawled without resolving the location again');
  const sent = google.searches().find((r) => r.query.q === 'carried');
  t.equal(sent?.query.uule, 'w+CAIQICIaQXVzdGlu', 'with the uule the job carried');
  t.match(outcome.targeting, { location: 'Austin,Texas,United States', gl: 'us', uule: 'w+CAIQICIaQXVzdGlu' });
});
