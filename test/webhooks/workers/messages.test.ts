import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { streams } from '../../../contracts/events.js';
import type { SearchRequest } from '../../../contracts/search.js';
import { type SearchJobCommand, searchJobDecider } from '../../../domain/searchJob/searchJob.js';
import { allProjections, readModelQueries } from '../../../projections/index.js';
import { createFsBlobStore } from '../../../services/adapters/blobStore/fs.js';
import { createSqliteEventStore } from '../../../services/adapters/eventStore/sqlite.js';
import { createSqliteReadModelStore } from '../../../services/adapters/readModel/sqlite.js';
import { putResult, resultBlobKey } from '../../../services/answers/resultBlobs.js';
import { createCommandHandler } from '../../../services/application/commandHandler.js';
import { createProjector } from '../../../services/projector/projector.js';
import { bodyOf, createResultSummaries } from '../../../services/webhooks/workers/messages.js';

/**
 * What a `search.completed` webhook says of its result (docs/webhooks.md): the Standard Webhooks body, with the
 * result's organic count and top three, read once and kept for the next message about the same result.
 */
t.test('webhook messages', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-webhook-messages-'));
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
  const jobId = '0123456789ab000000000001';
  const run = (command: SearchJobCommand) => handle(streams.searchJob(jobId), searchJobDecider, command);
  const now = '2026-12-07T10:00:00.000Z';
  await run({
    type: 'SubmitSearch',
    jobId,
    keyId: 'key_a',
    request: { keyword: 'coffee', device: 'desktop' } as SearchRequest,
    cacheKey: 'c',
    month: '202612',
    now,
  });
  await run({ type: 'StartCrawl', jobId, attempt: 1, worker: 'w', now });
  const organic = [1, 2, 3, 4].map((position) => ({
    position,
    title: `R${position}`,
    ...(position === 2 ? {} : { link: `https://r${position}.example/` }),
  }));
  const resultRef = await putResult(blobStore, resultBlobKey(jobId), {
    organic_results: organic,
    serp_features: {},
    information: {},
  });
  const rawHtmlRef = await blobStore.put(`raw/${jobId}.html`, '<html></html>');
  const done = await run({
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
  await projector.waitFor(done.position as number);

  const summaries = createResultSummaries(readModelQueries(readModels));
  const summary = {
    organic_results_count: 4,
    top_results: [
      { position: 1, title: 'R1', link: 'https://r1.example/' },
      { position: 2, title: 'R2', link: null },
      { position: 3, title: 'R3', link: 'https://r3.example/' },
    ],
  };
  t.same(summaries.of(jobId), summary, 'the count and the top three, a result without a link saying null');
  t.equal(summaries.of(jobId), summaries.of(jobId), 'read once, then kept');
  t.same(
    summaries.of('0123456789abffffffffffff'),
    { organic_results_count: 0, top_results: [] },
    'a result not projected yet is empty, and not kept',
  );
  const body = bodyOf({
    type: 'search.completed',
    keyId: 'key_a',
    messageId: 'msg_1',
    occurredAt: now,
    data: { job_id: jobId, ...summary },
  });
  t.same(
    JSON.parse(body),
    { type: 'search.completed', timestamp: now, data: { job_id: jobId, ...summary } },
    'the body is Standard Webhooks’ {type, timestamp, data}, nothing of the key in it',
  );
});
