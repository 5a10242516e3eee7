import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { ParsedSerp } from '../../contracts/result.js';
import type { SearchRequest } from '../../contracts/search.js';
import { searchJobDecider } from '../../domain/searchJob/searchJob.js';
import { assembleRawHtml, PARSER_VERSION, parseRaw } from '../../parser/index.js';
import { createFsBlobStore } from '../../services/adapters/blobStore/fs.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { loadResult, putResult, resultBlobKey } from '../../services/answers/resultBlobs.js';
import { createCommandHandler } from '../../services/application/commandHandler.js';
import { type ReparseEntry, reparseSearches } from '../../services/crawler/reparse.js';
import { fixturesMissing, listSerpPages, readFixtureText } from '../support/fixtures.js';

/**
 * `serp-api reparse` (docs/operations.md): the current parser over the raw HTML stored at crawl time. A job parsed by
 * an older parser gets a new result; one already current is left alone unless forced; one whose raw HTML is gone or
 * altered keeps the result it has and is reported as failed, with the reason.
 */
const missing = fixturesMissing();

const request = { keyword: 'coffee', device: 'desktop', capture_aio: false, no_cache: false } as SearchRequest;

t.test('reparse', { skip: missing }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-reparse-'));
  const eventStore = createSqliteEventStore({ path: join(dir, 'events.db') });
  const blobStore = createFsBlobStore(join(dir, 'blobs'));
  const handle = createCommandHandler(eventStore);
  t.teardown(async () => {
    await eventStore.close();
    rmSync(dir, { recursive: true, force: true });
  });

  // a real Google page, stored as the crawler stores it, with the result an older parser made of it (three results)
  const page = listSerpPages()
    .map((p) => readFixtureText(p))
    .find((html) => {
      const o = parseRaw(html, { captureAio: false });
      return o.kind === 'serp' && o.serp.organic_results.length >= 5;
    });
  if (!page) throw new Error('no fixture page with five organic results');
  const raw = assembleRawHtml([
    { start: 0, url: '/search?q=coffee', fetchedAt: '2026-12-01T00:00:00.000Z', html: page },
  ]);
  const fresh = parseRaw(raw, { captureAio: false });
  const organicNow = fresh.kind === 'serp' ? fresh.serp.organic_results.length : 0;

  const crawled = async (
    jobId: string,
    o: { parserVersion: string; completedAt: string; running?: boolean; raw?: string },
  ) => {
    const stream = `searchJob-${jobId}`;
    const now = o.completedAt;
    await handle(stream, searchJobDecider, {
      type: 'SubmitSearch',
      jobId,
      keyId: 'key_a',
      request,
      cacheKey: `c-${jobId}`,
      month: '202612',
      now,
    });
    await handle(stream, searchJobDecider, { type: 'StartCrawl', jobId, attempt: 1, worker: 'w', now });
    if (o.running) return;
    const old = fresh.kind === 'serp' ? fresh.serp : undefined;
    const resultRef = await putResult(blobStore, resultBlobKey(jobId), {
      ...(old as ParsedSerp),
      organic_results: (old as ParsedSerp).organic_results.slice(0, 3),
    });
    const rawHtmlRef = await blobStore.put(`raw/${jobId}.html`, o.raw ?? raw);
    await handle(stream, searchJobDecider, {
      type: 'CompleteCrawl',
      jobId,
      status: 'done',
      pages: [],
      resultRef,
      rawHtmlRef,
      parserVersion: o.parserVersion,
      blocks: 0,
      now,
    });
  };
  const ids = {
    old: '0123456789ab000000000001',
    current: '0123456789ab000000000002',
    altered: '0123456789ab000000000003',
    gone: '0123456789ab000000000004',
    running: '0123456789ab000000000005',
    before: '0123456789ab000000000006',
    captcha: '0123456789ab000000000007',
  };
  await crawled(ids.before, { parserVersion: '0.1.0', completedAt: '2026-11-01T00:00:00.000Z' });
  await crawled(ids.old, { parserVersion: '0.1.0', completedAt: '2026-12-01T00:00:00.000Z' });
  await crawled(ids.current, { parserVersion: PARSER_VERSION, completedAt: '2026-12-01T00:00:00.000Z' });
  await crawled(ids.altered, { parserVersion: '0.1.0', completedAt: '2026-12-01T00:00:00.000Z' });
  await blobStore.put(`raw/${ids.altered}.html`, `${raw}<!-- edited -->`);
  await crawled(ids.gone, { parserVersion: '0.1.0', completedAt: '2026-12-01T00:00:00.000Z' });
  await blobStore.delete(`raw/${ids.gone}.html`);
  // a page an older parser took for results, which the current one reads as Google's CAPTCHA
  const captcha =
    '<html><body><p>Our systems have detected unusual traffic from your computer network.</p></body></html>';
  await crawled(ids.captcha, { parserVersion: '0.1.0', completedAt: '2026-12-01T00:00:00.000Z', raw: captcha });
  await crawled(ids.running, { parserVersion: '0.1.0', completedAt: '2026-12-01T00:00:00.000Z', running: true });

  const deps = { eventStore, blobStore, handle, now: () => new Date('2026-12-07T10:00:00.000Z') };
  const byJob = (jobs: ReparseEntry[]) => Object.fromEntries(jobs.map((j) => [j.jobId, j]));

  await t.test('every job completed since a date', async (t) => {
    const seen: string[] = [];
    const report = await reparseSearches(
      { ...deps, onJob: (e) => seen.push(e.jobId) },
      { since: '2026-11-15T00:00:00Z' },
    );
    t.match(report, { parserVersion: PARSER_VERSION, reparsed: 1, skipped: 1, failed: 3 }, 'the counts');
    const jobs = byJob(report.jobs);
    t.notOk(jobs[ids.before], 'a job completed before the date is left out');
    t.notOk(jobs[ids.running], 'a job still running has completed nothing: not listed');
    t.same(
      jobs[ids.old],
      {
        jobId: ids.old,
        outcome: 'reparsed',
        from: '0.1.0',
        to: PARSER_VERSION,
        organic: { before: 3, after: organicNow },
      },
      'an older parser’s job is re-parsed: the report says how many organic results it had and has now',
    );
    t.same(jobs[ids.current], {
      jobId: ids.current,
      outcome: 'skipped',
      reason: `already parsed by ${PARSER_VERSION}`,
    });
    t.match(jobs[ids.altered], { outcome: 'failed', reason: /does not match the sha256 recorded at crawl time/ });
    t.match(jobs[ids.gone], { outcome: 'failed', reason: /is gone from the blob store/ });
    t.match(
      jobs[ids.captcha],
      {
        outcome: 'failed',
        reason: 'stored HTML no longer reads as results (captcha: Google CAPTCHA ("unusual traffic") page)',
      },
      'a page that no longer reads as results keeps its result, and says what it reads as',
    );
    t.same(
      seen,
      report.jobs.map((j) => j.jobId),
      'each job is reported as it is done',
    );
    t.ok(report.position, 'and the log position to wait for');

    const { events } = await eventStore.readStream(`searchJob-${ids.old}`);
    const reparsed = events.at(-1);
    t.match(
      reparsed,
      { type: 'SearchReparsed', data: { parserVersion: PARSER_VERSION } },
      'SearchReparsed is appended',
    );
    const stored = (await loadResult(blobStore, reparsed?.data as { resultRef: never })) as ParsedSerp;
    t.equal(stored.organic_results.length, organicNow, 'and its stored result is the new parse');
    const altered = await eventStore.readStream(`searchJob-${ids.altered}`);
    t.equal(altered.events.at(-1)?.type, 'CrawlCompleted', 'a failed job keeps the result it had');
  });

  await t.test('a second run finds nothing to do, unless forced', async (t) => {
    const again = await reparseSearches(deps, { jobId: ids.old });
    t.same(again.jobs, [{ jobId: ids.old, outcome: 'skipped', reason: `already parsed by ${PARSER_VERSION}` }]);
    const forced = await reparseSearches(deps, { jobId: ids.current, force: true });
    t.match(
      forced.jobs,
      [{ jobId: ids.current, outcome: 'reparsed', from: PARSER_VERSION, to: PARSER_VERSION }],
      'forced',
    );
  });

  await t.test('one job by id', async (t) => {
    const running = await reparseSearches(deps, { jobId: ids.running });
    t.match(running.jobs, [{ outcome: 'failed', reason: 'job is running: it has no stored result to re-parse' }]);
    await t.rejects(
      reparseSearches(deps, { jobId: '0123456789abffffffffffff' }),
      { code: 'SERP_JOB_NOT_FOUND' },
      'an unknown job is an error that names it',
    );
  });
});
