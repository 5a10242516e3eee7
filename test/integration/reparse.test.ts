import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import t from 'tap';
import { streams } from '../../contracts/events.js';
import { PARSER_VERSION } from '../../parser/index.js';
import { readModelQueries } from '../../projections/index.js';
import type { SearchResultDoc } from '../../projections/searchResults/searchResults.js';
import { createFsBlobStore } from '../../services/adapters/blobStore/fs.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';
import { type FakeGoogle, startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { cli, pollJob, type RunningService, removeDir, startService, submit, tempDataDir } from '../support/service.js';

const missing = fixturesMissing();

type Native = { search_metadata: { id: string; parser_version: string }; organic_results: Array<{ link?: string }> };

/** The CLI's failure as a user sees it: exit code and stderr (execFile rejects on a non-zero exit). */
const cliFails = async (args: string[]) => {
  try {
    await cli(args);
  } catch (err) {
    const e = err as { code?: number; stderr?: string };
    return { code: e.code, stderr: e.stderr ?? '' };
  }
  throw new Error(`serp-api ${args.join(' ')} succeeded`);
};

t.test('reparse', { skip: missing }, async (t) => {
  const google: FakeGoogle = await startFakeGoogle({});
  const data = tempDataDir('reparse');
  let svc: RunningService | undefined = await startService(data, { SERP_GOOGLE_ORIGIN: google.origin });
  t.teardown(async () => {
    await svc?.stop();
    await google.close();
    removeDir(data);
  });
  const eventsDb = join(data, 'events.db');
  const { key } = JSON.parse(await cli(['keys', 'create', '--tier', 'free', '--json', '--data', data])) as {
    key: string;
  };
  const get = async (jobId: string) => {
    const res = await fetch(`${svc!.url}/v1/search/${jobId}?output=json`, { headers: { 'x-api-key': key } });
    if (res.status !== 200) throw new Error(`GET /v1/search/${jobId} answered ${res.status}`);
    return (await res.json()) as Native;
  };
  const used = async () =>
    (
      (await (await fetch(`${svc!.url}/v1/usage`, { headers: { 'x-api-key': key } })).json()) as {
        used_this_month: number;
      }
    ).used_this_month;
  const crawl = async (keyword: string) => {
    const { job_id } = (await (await submit(svc!.url, key, { keyword })).json()) as { job_id: string };
    const done = await pollJob(svc!.url, key, job_id);
    t.equal(done.status, 200, `${keyword} crawled`);
    return (await done.json()) as Native;
  };
  const jobEvents = async (jobId: string) => {
    const store = createSqliteEventStore({ path: eventsDb });
    try {
      return (await store.readStream(streams.searchJob(jobId))).events;
    } finally {
      await store.close();
    }
  };

  const first = await crawl('coffee');
  const jobId = first.search_metadata.id;
  t.equal(first.search_metadata.parser_version, PARSER_VERSION, 'crawled by the current parser');
  const firstDone = new Date().toISOString();

  await t.test('re-parses a job an older parser read, beside the running service', async (t) => {
    // What an older parser left behind: another version and fewer results, appended as a real process would.
    const store = createSqliteEventStore({ path: eventsDb });
    const { events } = await store.readStream(streams.searchJob(jobId));
    // the crawl's result is in the blob store, referenced by the event; this old parse is written inline, as events
    // recorded before results moved out of them were (both shapes must keep reading)
    const ref = (events.find((e) => e.type === 'CrawlCompleted')!.data as { resultRef: { key: string } }).resultRef;
    const completed = {
      result: JSON.parse((await createFsBlobStore(join(data, 'blobs')).get(ref.key))!.toString('utf8')),
    } as SearchResultDoc;
    await store.appendToStream(
      streams.searchJob(jobId),
      [
        {
          type: 'SearchReparsed',
          data: {
            jobId,
            parserVersion: '0.0.1-old',
            result: { ...completed.result, organic_results: completed.result.organic_results.slice(0, 3) },
            reparsedAt: new Date().toISOString(),
          },
          metadata: { eventId: randomUUID() },
        },
      ],
      { expectedVersion: events.length - 1 },
    );
    await store.close();
    for (let i = 0; i < 100 && (await get(jobId)).search_metadata.parser_version !== '0.0.1-old'; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const old = await get(jobId);
    t.equal(old.search_metadata.parser_version, '0.0.1-old', 'the service serves the old parse');
    t.equal(old.organic_results.length, 3, 'with its three results');

    const usedBefore = await used();
    const crawlsBefore = google.searches().length;
    const out = await cli(['reparse', '--data', data]);
    t.match(out, `reparsed ${jobId}: parser 0.0.1-old → ${PARSER_VERSION}`, 'names the job and both versions');
    t.match(out, 're-parsed 1, skipped 0, failed 0', 'prints the summary');

    const after = await get(jobId);
    t.equal(after.search_metadata.parser_version, PARSER_VERSION, 'served at once with the current parser version');
    t.same(after.organic_results, first.organic_results, 'the stored HTML parses into the crawl-time result again');
    const last = (await jobEvents(jobId)).at(-1)!;
    t.equal(last.type, 'SearchReparsed', 'SearchReparsed appended to the job stream');
    t.match(last.data, { jobId, parserVersion: PARSER_VERSION });
    t.equal(await used(), usedBefore, 'no quota used');
    t.equal(google.searches().length, crawlsBefore, 'no request reached Google');
  });

  await t.test('skips a job the current parser already read, unless --force', async (t) => {
    const before = (await jobEvents(jobId)).length;
    const skipped = await cli(['reparse', '--job', jobId, '--data', data]);
    t.match(skipped, `skipped ${jobId}: already parsed by ${PARSER_VERSION}`);
    t.match(skipped, 're-parsed 0, skipped 1, failed 0');
    t.equal((await jobEvents(jobId)).length, before, 'nothing appended');

    const forced = await cli(['reparse', '--job', jobId, '--force', '--data', data]);
    t.match(forced, 're-parsed 1, skipped 0, failed 0');
    t.equal((await jobEvents(jobId)).length, before + 1, 'one SearchReparsed more');
  });

  await t.test('--since selects jobs by completion date', async (t) => {
    await new Promise((r) => setTimeout(r, 20));
    const second = (await crawl('tea')).search_metadata.id;
    const crawlsBefore = google.searches().length;
    const report = JSON.parse(
      await cli(['reparse', '--since', firstDone.replace('Z', '+00:00'), '--force', '--json', '--data', data]),
    ) as { reparsed: number; jobs: Array<{ jobId: string; outcome: string }> };
    t.same(
      report.jobs.map((j) => [j.jobId, j.outcome]),
      [[second, 'reparsed']],
      'only the job completed after the date',
    );
    const both = JSON.parse(await cli(['reparse', '--since', '2000-01-01', '--force', '--json', '--data', data])) as {
      jobs: Array<{ jobId: string }>;
    };
    t.same(both.jobs.map((j) => j.jobId).sort(), [jobId, second].sort(), 'an early date selects both');
    const none = await cli(['reparse', '--since', '2999-01-01', '--force', '--data', data]);
    t.match(none, 're-parsed 0, skipped 0, failed 0', 'a future date selects none');
    t.equal(google.searches().length, crawlsBefore, 'still no request reached Google');
  });

  await t.test('bad input is a clear error and a non-zero exit', async (t) => {
    const date = await cliFails(['reparse', '--since', 'notadate', '--data', data]);
    t.not(date.code, 0);
    t.match(date.stderr, /--since <date>' argument 'notadate' is invalid\. must be an ISO 8601 date/);
    const unknown = await cliFails(['reparse', '--job', '000000000000000000000000', '--data', data]);
    t.not(unknown.code, 0);
    t.match(unknown.stderr, 'job 000000000000000000000000 not found');
    const both = await cliFails(['reparse', '--job', jobId, '--since', '2026-01-01', '--data', data]);
    t.match(both.stderr, /cannot be used with/);
  });

  await t.test('with the service stopped it writes and projects the data directory itself', async (t) => {
    await svc?.stop();
    svc = undefined;
    const report = JSON.parse(await cli(['reparse', '--job', jobId, '--force', '--json', '--data', data])) as {
      reparsed: number;
    };
    t.equal(report.reparsed, 1);
    const last = (await jobEvents(jobId)).at(-1)!;
    const readModels = createSqliteReadModelStore(join(data, 'read.db'));
    const doc = readModelQueries(readModels).results.byJobId(jobId);
    readModels.close();
    t.equal(doc?.reparsedAt, (last.data as { reparsedAt: string }).reparsedAt, 'the read model has the new parse');
  });
});
