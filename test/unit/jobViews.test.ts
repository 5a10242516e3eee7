import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { streams } from '../../contracts/events.js';
import type { SearchRequest } from '../../contracts/search.js';
import { type SearchJobCommand, searchJobDecider } from '../../domain/searchJob/searchJob.js';
import { allProjections } from '../../projections/index.js';
import { jobStatusQueries } from '../../projections/jobStatus/queries.js';
import { resultCacheQueries } from '../../projections/resultCache/queries.js';
import { searchResultsQueries } from '../../projections/searchResults/queries.js';
import { createFsBlobStore } from '../../services/adapters/blobStore/fs.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';
import { putResult, resultBlobKey } from '../../services/answers/resultBlobs.js';
import { createCommandHandler } from '../../services/application/commandHandler.js';
import { createProjector } from '../../services/projector/projector.js';

/**
 * What the read side knows of a key's jobs (docs/design.md#read-models): each job's status, the open ones a restarted
 * dispatcher queues again, a key's newest jobs, a crawled job's result (a cache answer has none of its own), and the
 * crawl a later search with the same cache key may be answered from.
 */
t.test('job views', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-job-views-'));
  const eventStore = createSqliteEventStore({ path: join(dir, 'events.db') });
  const readModels = createSqliteReadModelStore(join(dir, 'read.db'));
  const blobStore = createFsBlobStore(join(dir, 'blobs'));
  const projector = createProjector({ eventStore, readModels, blobStore, projections: allProjections });
  await projector.start();
  t.teardown(async () => {
    await projector.stop();
    readModels.close();
    await eventStore.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const handle = createCommandHandler(eventStore);
  let last = 0;
  const run = async (jobId: string, command: SearchJobCommand) => {
    const r = await handle(streams.searchJob(jobId), searchJobDecider, command);
    if (r.position !== undefined) last = r.position;
  };
  const id = (n: number) => `0123456789ab00000000000${n}`;
  const submission = (n: number, keyword: string) => ({
    jobId: id(n),
    keyId: 'key_a',
    request: { keyword, device: 'desktop', depth: 10 } as SearchRequest,
    cacheKey: `cache:${keyword}`,
    month: '202612',
    now: `2026-12-07T10:0${n}:00.000Z`,
  });
  const organic = [1, 2, 3].map((position) => ({
    position,
    title: `R${position}`,
    link: `https://r${position}.example/`,
  }));

  await run(id(1), { type: 'SubmitSearch', ...submission(1, 'coffee') });
  await run(id(1), { type: 'StartCrawl', jobId: id(1), attempt: 1, worker: 'w', now: '2026-12-07T10:01:10.000Z' });
  const resultRef = await putResult(blobStore, resultBlobKey(id(1)), {
    organic_results: organic,
    serp_features: {},
    information: {},
  });
  const rawHtmlRef = await blobStore.put(`raw/${id(1)}.html`, '<html></html>');
  await run(id(1), {
    type: 'CompleteCrawl',
    jobId: id(1),
    status: 'done',
    pages: [],
    resultRef,
    rawHtmlRef,
    parserVersion: '1',
    blocks: 0,
    now: '2026-12-07T10:01:20.000Z',
  });
  await run(id(2), { type: 'AnswerFromCache', sourceJobId: id(1), ...submission(2, 'coffee') });
  await run(id(3), { type: 'SubmitSearch', ...submission(3, 'tea') });
  await projector.waitFor(last);

  const jobs = jobStatusQueries(readModels);
  t.match(jobs.byId(id(1)), { status: 'done', keyId: 'key_a' }, 'a crawled job is done');
  t.match(
    jobs.byId(id(2)),
    { status: 'done', sourceJobId: id(1) },
    'a cache answer is done at once, naming its source',
  );
  t.same(
    jobs.open().map((j) => j.jobId),
    [id(3)],
    'the one job still open is what a restarted dispatcher queues again',
  );
  t.same(
    jobs.recentOfKey('key_a', 2).map((j) => j.jobId),
    [id(3), id(2)],
    'a key’s newest jobs first, open or ended',
  );
  t.same(
    jobs
      .endedOfKey('key_a')
      .map((j) => j.jobId)
      .sort(),
    [id(1), id(2)],
    'its ended jobs, where a monitor’s backfill looks',
  );

  const results = searchResultsQueries(readModels);
  t.same(
    results.byJobId(id(1))?.result.organic_results.map((o) => o.title),
    ['R1', 'R2', 'R3'],
    'the crawled job’s result',
  );
  t.ok(results.has(id(1)), 'known to exist without reading it');
  t.notOk(results.has(id(2)), 'a cache answer has no result of its own: its source’s is read');

  const cache = resultCacheQueries(readModels);
  t.match(
    cache.byCacheKey('cache:coffee'),
    { cacheKey: 'cache:coffee', entries: [{ jobId: id(1), covers: 10 }] },
    'the crawl a later search for the same thing may be answered from, and how deep it goes',
  );
  t.equal(cache.byCacheKey('cache:tea'), undefined, 'nothing for a search not crawled yet');
});
