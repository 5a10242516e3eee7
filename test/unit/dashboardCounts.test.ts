import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { streams } from '../../contracts/events.js';
import type { SearchRequest } from '../../contracts/search.js';
import { type SearchJobCommand, searchJobDecider } from '../../domain/searchJob/searchJob.js';
import { usageDecider } from '../../domain/usage/usage.js';
import { hourlyOutcomesProjection } from '../../projections/dashboard/hourlyOutcomes.js';
import { keyDailyProjection } from '../../projections/dashboard/keyDaily.js';
import { dashboardQueries } from '../../projections/dashboard/queries.js';
import { laneHoursProjection } from '../../projections/queue/laneHours.js';
import { queueQueries } from '../../projections/queue/queries.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';
import { createCommandHandler } from '../../services/application/commandHandler.js';
import { createProjector } from '../../services/projector/projector.js';

/**
 * The dashboard's counts (docs/operations.md, the admin dashboard): the service's jobs per hour by outcome, a key's
 * searches per day, and the pages each lane asked of the fleet per hour (docs/fleet.md#capacity-against-demand),
 * folded from the log, with every hour and day of the window present.
 */
const ref = { key: 'blob', sha256: '0'.repeat(64), bytes: 1 };

t.test('dashboard counts', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-dashboard-counts-'));
  const eventStore = createSqliteEventStore({ path: join(dir, 'events.db') });
  const readModels = createSqliteReadModelStore(join(dir, 'read.db'));
  const projector = createProjector({
    eventStore,
    readModels,
    projections: [hourlyOutcomesProjection, keyDailyProjection, laneHoursProjection],
  });
  await projector.start();
  t.teardown(async () => {
    await projector.stop();
    readModels.close();
    await eventStore.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const handle = createCommandHandler(eventStore);
  let last = 0;
  const run = async (id: string, command: SearchJobCommand) => {
    const r = await handle(streams.searchJob(id), searchJobDecider, command);
    if (r.position !== undefined) last = r.position;
  };
  const submission = (jobId: string, now: string, depth: number, lane?: 'live' | 'bulk') => ({
    jobId,
    keyId: 'key_a',
    request: { keyword: jobId, device: 'desktop', depth } as SearchRequest,
    cacheKey: jobId,
    month: '202612',
    now,
    ...(lane ? { lane } : {}),
  });

  // 10 o'clock: two crawled searches (one done, one partial), one answered from cache
  await run('j1', { type: 'SubmitSearch', ...submission('j1', '2026-12-07T10:05:00.000Z', 100) });
  await run('j2', { type: 'SubmitSearch', ...submission('j2', '2026-12-07T10:10:00.000Z', 10, 'bulk') });
  await run('j3', { type: 'AnswerFromCache', sourceJobId: 'j1', ...submission('j3', '2026-12-07T10:15:00.000Z', 100) });
  for (const [id, status] of [
    ['j1', 'done'],
    ['j2', 'partial'],
  ] as const) {
    await run(id, { type: 'StartCrawl', jobId: id, attempt: 1, worker: 'w', now: '2026-12-07T10:20:00.000Z' });
    await run(id, {
      type: 'CompleteCrawl',
      jobId: id,
      status,
      pages: [],
      resultRef: ref,
      rawHtmlRef: ref,
      parserVersion: '1',
      blocks: 0,
      now: '2026-12-07T10:30:00.000Z',
    });
  }
  // 11 o'clock: a search that failed on a CAPTCHA after a retry, its quota handed back the next day
  await run('j4', { type: 'SubmitSearch', ...submission('j4', '2026-12-07T11:00:00.000Z', 20) });
  await run('j4', { type: 'StartCrawl', jobId: 'j4', attempt: 1, worker: 'w', now: '2026-12-07T11:01:00.000Z' });
  for (const final of [false, true]) {
    await run('j4', {
      type: 'FailCrawl',
      jobId: 'j4',
      attempt: 1,
      reason: 'captcha',
      failure: { code: 'SERP_CRAWL_BLOCKED', kind: 'captcha' },
      final,
      now: '2026-12-07T11:02:00.000Z',
    });
  }
  await handle(streams.usage('key_a', '202612'), usageDecider, {
    type: 'ReserveQuota',
    keyId: 'key_a',
    month: '202612',
    jobId: 'j4',
    monthlyQuota: 100,
    now: '2026-12-07T11:00:00.000Z',
  });
  const released = await handle(streams.usage('key_a', '202612'), usageDecider, {
    type: 'ReleaseQuota',
    keyId: 'key_a',
    month: '202612',
    jobId: 'j4',
    reason: 'failed',
    now: '2026-12-08T00:01:00.000Z',
  });
  await projector.waitFor(Math.max(last, released.position ?? 0));

  const now = new Date('2026-12-08T00:30:00.000Z');
  const hours = dashboardQueries(readModels).hours(24, now);
  t.equal(hours.length, 24, 'the last 24 hours, every one present');
  t.same(
    hours.filter((h) => h.submitted > 0 || h.done > 0 || Object.keys(h.failed).length > 0),
    [
      { hour: '2026-12-07T10', submitted: 3, cached: 1, done: 1, partial: 1, failed: {} },
      { hour: '2026-12-07T11', submitted: 1, cached: 0, done: 0, partial: 0, failed: { captcha: 1 } },
    ],
    'each hour’s submits, cache answers and outcomes; a failure counts once, when it is final',
  );

  const days = dashboardQueries(readModels).keyDays('key_a', 3, now);
  t.same(
    days.map((d) => [d.day, d.searches, d.cached, d.reserved, d.released]),
    [
      ['2026-12-06', 0, 0, 0, 0],
      ['2026-12-07', 4, 1, 3, 0],
      ['2026-12-08', 0, 0, 0, 1],
    ],
    'a key’s days: a cache answer is free, a released reservation counts on the day it came back',
  );

  const lanes = queueQueries(readModels).laneHours(3, new Date('2026-12-07T11:30:00.000Z'));
  t.same(
    lanes.map((h) => [h.hour, h.jobs, h.pages]),
    [
      ['2026-12-07T09', {}, {}],
      ['2026-12-07T10', { live: 1, bulk: 1 }, { live: 10, bulk: 1 }],
      ['2026-12-07T11', { live: 1 }, { live: 2 }],
    ],
    'pages asked per lane and hour, by each search’s depth; a cache answer asks nothing',
  );
});
