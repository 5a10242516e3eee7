import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { chromiumMissing } from '../support/chromium.js';
import { type FakeGoogle, startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import {
  cli,
  cliResult,
  pollJob,
  type RunningService,
  removeDir,
  startService,
  submit,
  tempDataDir,
} from '../support/service.js';

const missing = fixturesMissing();

/** bytes under `dir`, files only */
const du = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce(
    (n, e) => n + (e.isDirectory() ? du(join(dir, e.name)) : statSync(join(dir, e.name)).size),
    0,
  );
const blobFiles = (data: string) =>
  ['raw', 'results'].flatMap((d) => {
    try {
      return readdirSync(join(data, 'blobs', d)).map((f) => `${d}/${f}`);
    } catch {
      return [];
    }
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('retention deletes', { skip: missing }, async (t) => {
  const google: FakeGoogle = await startFakeGoogle({});
  const data = tempDataDir('retention');
  let svc: RunningService | undefined = await startService(data, { SERP_GOOGLE_ORIGIN: google.origin });
  t.teardown(async () => {
    await svc?.stop();
    await google.close();
    removeDir(data);
  });
  const { key } = JSON.parse(await cli(['keys', 'create', '--tier', 'pro', '--json', '--data', data])) as {
    key: string;
  };
  const crawl = async (keyword: string) => {
    const { job_id } = (await (await submit(svc!.url, key, { keyword })).json()) as { job_id: string };
    const done = await pollJob(svc!.url, key, job_id);
    t.equal(done.status, 200, `${keyword} crawled`);
    return { jobId: job_id, body: await done.text() };
  };
  const fetchJob = (jobId: string, output = 'json') =>
    fetch(`${svc!.url}/v1/search/${jobId}?output=${output}`, { headers: { 'x-api-key': key } });

  const old = [await crawl('coffee'), await crawl('tea')];
  const oldAnswer = old[0].body;
  await sleep(1_500);
  const cutoffGap = Date.now();
  await sleep(1_500);
  const young = [await crawl('pizza'), await crawl('best running shoes')];
  // a young job answered from cache by an old one
  const cachedRes = await submit(svc!.url, key, { keyword: 'coffee' });
  t.equal(cachedRes.status, 200, 'coffee again: from cache');
  const cached = (await cachedRes.json()) as { job_id: string; cached: boolean };
  t.equal(cached.cached, true);
  const youngBefore = await Promise.all(young.map(async (j) => (await fetchJob(j.jobId)).text()));
  const filesBefore = blobFiles(data);
  t.equal(filesBefore.length, 8, 'raw HTML and a result blob for each of four jobs');
  // a screenshot of an old job and of a young one, kept beside their pages (docs/screenshots.md#what-it-costs)
  const rendered = chromiumMissing() ? [] : [old[0], young[0]];
  for (const j of rendered) {
    const res = await fetch(`${svc!.url}/v1/search/${j.jobId}/screenshot?viewport=1`, {
      headers: { 'x-api-key': key },
    });
    await res.arrayBuffer();
    t.equal(res.status, 200, `${j.jobId} rendered`);
  }
  const renders = (jobId: string) => {
    try {
      return readdirSync(join(data, 'blobs', 'render', jobId));
    } catch {
      return [];
    }
  };

  await t.test('results live in the blob store, not in the events', async (t) => {
    const db = new Database(join(data, 'events.db'), { readonly: true });
    const rows = db
      .prepare<[], { data: string }>("SELECT data FROM events WHERE type = 'CrawlCompleted'")
      .all()
      .map((r) => JSON.parse(r.data) as { result?: unknown; resultRef?: { key: string } });
    db.close();
    t.equal(rows.length, 4);
    t.ok(
      rows.every((r) => r.result === undefined && r.resultRef?.key.startsWith('results/')),
      'every CrawlCompleted references its result',
    );
  });

  await t.test('a sweep beside the running service deletes what is older, and nothing younger', async (t) => {
    const sizeBefore = du(join(data, 'blobs'));
    // the cut between the two pairs of jobs
    const before = new Date(cutoffGap).toISOString();
    const out = await cli(['retention', 'sweep', '--before', before, '--data', data]);
    t.match(
      out,
      new RegExp(`purged 2 jobs, deleted ${4 + rendered.length / 2} blobs`),
      'their pages, results and renders',
    );
    const sizeAfter = du(join(data, 'blobs'));
    t.ok(sizeAfter < sizeBefore * 0.75, `blob store shrank: ${sizeBefore} -> ${sizeAfter} bytes`);
    const left = blobFiles(data);
    t.equal(left.length, 4);
    for (const j of old)
      t.notOk(
        left.some((f) => f.includes(j.jobId)),
        `${j.jobId}'s blobs are gone`,
      );
    for (const j of young) t.equal(left.filter((f) => f.includes(j.jobId)).length, 2, `${j.jobId}'s blobs stay`);
    t.test('renders go with their search', { skip: chromiumMissing() }, async (t) => {
      t.same(renders(old[0].jobId), [], "the old search's screenshot is deleted with it");
      t.equal(renders(young[0].jobId).length, 1, "the young search's screenshot stays");
    });

    for (const j of old) {
      const res = await fetchJob(j.jobId);
      t.equal(res.status, 410, 'a purged job answers 410');
      t.match(await res.json(), { code: 'SERP_JOB_EXPIRED' });
      t.equal((await fetchJob(j.jobId, 'html')).status, 410);
    }
    t.equal(
      (await fetchJob(cached.job_id)).status,
      410,
      'a young job answered from cache by a purged one answers 410: its result is gone',
    );
    // the compat surface: the archive and a pagination link of SerpApi's shape
    const archive = await fetch(`${svc!.url}/searches/${old[0].jobId}.json?api_key=${key}`);
    t.equal(archive.status, 410, '/searches/{id} of a purged search: 410');
    t.match(await archive.json(), { error: /expired/ });
    const paged = await fetch(
      `${svc!.url}/search?engine=google&q=coffee&start=10&search_id=${old[0].jobId}&api_key=${key}`,
    );
    t.equal(paged.status, 410, 'a pagination link to a purged search: 410, not "Processing" and not a new crawl');
    t.match(await paged.json(), { error: /expired.*run it again without search_id/ });
    const youngAfter = await Promise.all(young.map(async (j) => (await fetchJob(j.jobId)).text()));
    t.same(youngAfter, youngBefore, 'younger jobs answer byte for byte as before');

    const again = await cli(['retention', 'sweep', '--before', before, '--data', data]);
    t.match(again, /purged 0 jobs/, 'a second sweep finds nothing more');
    const young0 = await cli(['retention', 'sweep', '--data', data]);
    t.match(young0, /purged 0 jobs/, 'the default 31 days finds nothing at all');
  });

  await t.test('after a stop: the rows are gone from the read models, replay and audit still work', async (t) => {
    await svc?.stop();
    svc = undefined;
    const db = new Database(join(data, 'read.db'), { readonly: true });
    const ids = db.prepare<[], { view: string; id: string }>('SELECT view, id FROM docs').all();
    db.close();
    for (const j of old) {
      t.notOk(
        ids.some((r) => r.id === j.jobId),
        `no read-model row names ${j.jobId}`,
      );
    }
    for (const j of young) t.ok(ids.some((r) => r.view === 'searchResults' && r.id === j.jobId));
    const dump = () => {
      const d = new Database(join(data, 'read.db'), { readonly: true });
      const rows = d.prepare('SELECT view, id, doc FROM docs ORDER BY view, id').all();
      d.close();
      return rows;
    };
    const before = dump();
    await cli(['projections', 'rebuild', '--data', data]);
    t.same(dump(), before, 'a replay of the log rebuilds the same read models (purged jobs stay purged)');
    const audit = await cli(['audit', 'usage', '--month', new Date().toISOString().slice(0, 7), '--data', data]);
    t.notMatch(audit, /!/, 'audit usage finds no discrepancy');
    t.match(audit, /charged jobs 4/);
  });

  await t.test('an older data directory with results inside its events is migrated at start', async (t) => {
    // put the data directory back the way an older version wrote it: young[0]'s result inline in its event, no blob
    const db = new Database(join(data, 'events.db'));
    const row = db
      .prepare<[string], { global_position: number; data: string }>(
        "SELECT global_position, data FROM events WHERE type = 'CrawlCompleted' AND json_extract(data, '$.jobId') = ?",
      )
      .get(young[0].jobId)!;
    const { resultRef, ...rest } = JSON.parse(row.data) as { resultRef: { key: string } };
    const blobPath = join(data, 'blobs', ...resultRef.key.split('/'));
    const { gunzipSync } = await import('node:zlib');
    const result = JSON.parse(gunzipSync(readFileSync(blobPath)).toString('utf8'));
    db.prepare('UPDATE events SET data = ? WHERE global_position = ?').run(
      JSON.stringify({ ...rest, result }),
      row.global_position,
    );
    db.exec("DELETE FROM migrations WHERE name = 'results-out-of-events'");
    db.close();
    const { rmSync } = await import('node:fs');
    rmSync(blobPath);
    rmSync(join(data, 'read.db'));

    svc = await startService(data, { SERP_GOOGLE_ORIGIN: google.origin });
    const after = await (await fetchJob(young[0].jobId)).text();
    t.same(JSON.parse(after), JSON.parse(youngBefore[0]), 'the migrated job answers the same result');
    const check = new Database(join(data, 'events.db'), { readonly: true });
    const inline = check
      .prepare("SELECT COUNT(*) AS n FROM events WHERE json_type(data, '$.result') IS NOT NULL")
      .get() as { n: number };
    check.close();
    t.equal(inline.n, 0, 'no event keeps a result inline');
    t.ok(blobFiles(data).includes(resultRef.key), 'its result is a blob again');
    t.equal((await fetchJob(old[0].jobId)).status, 410, 'purged jobs stay purged');
    t.ok(oldAnswer.length > 0);
  });
});

t.test('retention sweep --before holds its date to the calendar, as the API does', async (t) => {
  const data = tempDataDir('retention-dates');
  t.teardown(() => removeDir(data));
  for (const [before, why] of [
    ['2026-02-30', 'February 2026 has 28 days'],
    ['2026-04-31T00:00:00Z', 'April 2026 has 30 days'],
    ['2026-03-01T25:00:00Z', 'hours are 00–23'],
  ] as const) {
    const res = await cliResult(['retention', 'sweep', '--before', before, '--data', data]);
    t.not(res.code, 0, `--before ${before} is refused`);
    t.match(res.stderr, why, `saying why: ${why}`);
  }
});
