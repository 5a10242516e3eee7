import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { streams } from '../../contracts/events.js';
import type { SearchRequest } from '../../contracts/search.js';
import { searchJobDecider } from '../../domain/searchJob/searchJob.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createCommandHandler } from '../../services/application/commandHandler.js';
import { readJobState } from '../../services/application/jobState.js';

/**
 * A job's state straight from its stream (docs/architecture.md): what a worker reads when the read model may not have
 * caught up yet, so a redelivered job that already ended is never crawled again.
 */
t.test('job state from the log', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-job-state-'));
  const eventStore = createSqliteEventStore({ path: join(dir, 'events.db') });
  t.teardown(async () => {
    await eventStore.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const handle = createCommandHandler(eventStore);
  const jobId = '0123456789ab000000000001';
  const now = '2026-12-07T10:00:00.000Z';
  const stream = streams.searchJob(jobId);
  const request = { keyword: 'coffee', device: 'desktop' } as SearchRequest;

  t.match(await readJobState(eventStore, jobId), { status: 'none' }, 'a job never submitted');
  await handle(stream, searchJobDecider, {
    type: 'SubmitSearch',
    jobId,
    keyId: 'k',
    request,
    cacheKey: 'c',
    month: '202612',
    now,
  });
  t.match(await readJobState(eventStore, jobId), { status: 'queued', attempts: 0 }, 'submitted: queued');
  await handle(stream, searchJobDecider, { type: 'StartCrawl', jobId, attempt: 1, worker: 'w1', now });
  await handle(stream, searchJobDecider, {
    type: 'FailCrawl',
    jobId,
    attempt: 1,
    reason: 'blocked',
    final: true,
    now,
  });
  t.match(
    await readJobState(eventStore, jobId),
    { status: 'failed' },
    'a final failure ends it, at once, as the log says',
  );
});
