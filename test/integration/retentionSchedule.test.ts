import t from 'tap';
import type { SearchRequest } from '../../contracts/search.js';
import { searchJobDecider } from '../../domain/searchJob/searchJob.js';
import { putResult, resultBlobKey } from '../../services/answers/resultBlobs.js';
import { openCore } from '../../services/compose/embedded/core.js';
import { scheduleRetention } from '../../services/compose/retention.js';
import { loadConfig } from '../../services/config/config.js';
import { removeDir, tempDataDir } from '../support/service.js';

/** The service's own sweeps (SERP_RETENTION_SWEEP_MIN): what `serve` and the dispatcher role start. */
t.test('scheduled retention sweeps purge ended jobs past the retention, and stop cleanly', async (t) => {
  const dataDir = tempDataDir('retention-schedule');
  t.teardown(() => removeDir(dataDir));
  const core = await openCore(loadConfig({}, { dataDir }));
  t.teardown(() => core.close());
  const jobId = '0123456789ab0123456789ab';
  const stream = `searchJob-${jobId}`;
  const now = new Date().toISOString();
  const request = { keyword: 'coffee', device: 'desktop', capture_aio: false, no_cache: false } as SearchRequest;
  const result = {
    organic_results: [{ position: 1, title: 'Coffee', link: 'https://example.com/' }],
    serp_features: {},
    information: {},
  };
  await core.handle(stream, searchJobDecider, {
    type: 'SubmitSearch',
    jobId,
    keyId: 'k1',
    request,
    cacheKey: 'ck',
    month: '202611',
    now,
  });
  await core.handle(stream, searchJobDecider, { type: 'StartCrawl', jobId, attempt: 1, worker: 'w', now });
  const rawHtmlRef = await core.blobStore.put(`raw/${jobId}.html`, '<html>coffee</html>');
  const resultRef = await putResult(core.blobStore, resultBlobKey(jobId), result);
  const done = await core.handle(stream, searchJobDecider, {
    type: 'CompleteCrawl',
    jobId,
    status: 'done',
    pages: [],
    resultRef,
    rawHtmlRef,
    parserVersion: '1',
    blocks: 0,
    now,
  });
  await core.projector.waitFor(done.position!);
  t.ok(core.queries.results.byJobId(jobId), 'the result is projected from its blob');

  const lines: string[] = [];
  const parts = {
    ...core,
    compact: () => core.readModels.compact(),
    projected: (position: number) => core.projector.waitFor(position),
    retentionDays: 0,
    // a minute from now: the job is past a retention of 0 days
    now: () => new Date(Date.now() + 60_000),
  };
  const off = scheduleRetention(parts, 0, (msg) => lines.push(msg));
  await new Promise((r) => setTimeout(r, 200));
  await off.stop();
  t.ok(core.queries.jobs.byId(jobId), 'SERP_RETENTION_SWEEP_MIN=0: no sweep ever');

  // 0.002 minutes: the first sweep 120 ms after start
  const on = scheduleRetention(parts, 0.002, (msg) => lines.push(msg));
  for (let i = 0; i < 100 && core.queries.jobs.byId(jobId); i++) await new Promise((r) => setTimeout(r, 50));
  await on.stop();
  t.notOk(core.queries.jobs.byId(jobId), 'the job row is gone');
  t.notOk(core.queries.results.byJobId(jobId), 'and its result row');
  t.equal(await core.blobStore.get(rawHtmlRef.key), undefined, 'its raw HTML is deleted');
  t.equal(await core.blobStore.get(resultRef.key), undefined, 'and its result blob');
  t.same(lines, ['retention sweep'], 'one sweep purged it and said so; the next ones found nothing to say');
});
