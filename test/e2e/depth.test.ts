import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { DEFAULT_PAGES } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { checks, monitorApi } from '../support/ranks.js';
import { cli, pollJob, removeDir, startStack, submit, tempDataDir } from '../support/service.js';

type Json = Record<string, any>;

/**
 * `depth` end to end (docs/depth.md): a real `serp-api serve` against the fake Google, whose request log says how
 * many pages each search cost. A search asks Google for what it needs; the cache answers a search from a result at
 * least as deep, never from a shallower one.
 */
t.test('depth › through a listening service', { skip: fixturesMissing() }, async (t) => {
  const { google, svc, data, mintKey } = await startStack(t, {
    // two pages, then Google's "no results" page: a crawl that ends before its depth
    google: { queries: { 'depth two pages': DEFAULT_PAGES.slice(0, 2) } },
    // a monitor's scheduled run starts at once and submits all its keywords together
    env: { SERP_MONITOR_TICK_MS: '200', SERP_MONITOR_SPREAD_MAX_S: '0' },
  });
  const { key } = await mintKey(['--tier', 'pro']);
  const asked = (q: string) => google.searches().filter((r) => r.query.q === q).length;
  const used = async () =>
    ((await (await fetch(`${svc.url}/v1/usage`, { headers: { 'x-api-key': key } })).json()) as Json).used_this_month;
  /** submits and waits for the result (json); what submit answered comes with it */
  const search = async (body: Json) => {
    const res = await submit(svc.url, key, body);
    const submitted = (await res.json()) as Json;
    const result = (await (await pollJob(svc.url, key, submitted.job_id)).json()) as Json;
    return { status: res.status, submitted, result };
  };
  const positions = (r: Json) => (r.organic_results as Json[]).map((o) => o.position);
  const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

  t.test('a depth-10 search is one Google request', async (t) => {
    const { status, result } = await search({ keyword: 'depth ten', depth: 10 });
    t.equal(status, 202, 'a crawl');
    t.equal(asked('depth ten'), 1, 'exactly one page asked of Google');
    t.equal(result.search_metadata.pages_fetched, 1);
    t.equal(result.search_metadata.parameters.depth, 10, 'depth is recorded in search_metadata.parameters');
    const n = result.organic_results.length;
    t.ok(n > 0 && n <= 10, `Google's first page: ${n} results`);
    t.same(positions(result), upTo(n));
  });

  t.test('without depth, the top 100: every page', async (t) => {
    const { result } = await search({ keyword: 'depth default' });
    t.equal(asked('depth default'), DEFAULT_PAGES.length, 'ten pages');
    t.equal(result.search_metadata.parameters.depth, 100);
    t.ok(result.organic_results.length > 50, `${result.organic_results.length} results`);
  });

  t.test('a depth-100 result answers a depth-10 search from cache: its top 10, no request, no quota', async (t) => {
    const deep = await search({ keyword: 'depth deep', depth: 100 });
    const before = await used();
    const shallow = await search({ keyword: 'depth deep', depth: 10 });
    t.equal(shallow.status, 200);
    t.match(shallow.submitted, { status: 'done', cached: true });
    t.equal(asked('depth deep'), DEFAULT_PAGES.length, 'no page asked again');
    t.equal(await used(), before, 'a cache hit is free');
    t.same(positions(shallow.result), upTo(10), 'the top 10 of the deeper result');
    t.same(shallow.result.organic_results, deep.result.organic_results.slice(0, 10));
    t.equal(shallow.result.search_metadata.parameters.depth, 10);
  });

  t.test('a depth-10 result never answers a depth-30 search', async (t) => {
    await search({ keyword: 'depth shallow', depth: 10 });
    t.equal(asked('depth shallow'), 1);
    const before = await used();
    const deeper = await search({ keyword: 'depth shallow', depth: 30 });
    t.equal(deeper.status, 202, 'a crawl of its own');
    t.equal(deeper.submitted.cached, false);
    t.equal(asked('depth shallow'), 1 + 3, 'three more pages: what depth 30 needs');
    t.equal(await used(), before + 1, 'charged');
    const n = deeper.result.organic_results.length;
    t.ok(n > 20 && n <= 30, `three pages' results, at most 30 (${n})`);
    t.equal(deeper.result.search_metadata.pages_fetched, 3);
    // the newer, deeper result answers everything up to its depth
    const twenty = await search({ keyword: 'depth shallow', depth: 20 });
    t.equal(twenty.submitted.cached, true, 'depth 20 from the depth-30 result');
    t.same(twenty.result.organic_results, deeper.result.organic_results.slice(0, 20));
    const again = await search({ keyword: 'depth shallow', depth: 10 });
    t.equal(again.submitted.cached, true);
    t.equal(asked('depth shallow'), 4, 'no page asked again');
  });

  t.test('a crawl that reached the last page holds all Google had: it answers any depth', async (t) => {
    const first = await search({ keyword: 'depth two pages', depth: 30 });
    t.equal(asked('depth two pages'), 3, 'two pages of results, and the empty third that says there is no more');
    const n = first.result.organic_results.length;
    t.ok(n > 10 && n < 30, `${n} results: fewer than the depth`);
    const deeper = await search({ keyword: 'depth two pages', depth: 100 });
    t.equal(deeper.submitted.cached, true, 'a depth-100 search answered by it');
    t.equal(asked('depth two pages'), 3);
    t.same(deeper.result.organic_results, first.result.organic_results);
  });

  t.test('a newer shallow crawl does not hide an older deep one from a deep search', async (t) => {
    const deep = await search({ keyword: 'depth pair', depth: 100 });
    await search({ keyword: 'depth pair', depth: 10, no_cache: true });
    t.equal(asked('depth pair'), DEFAULT_PAGES.length + 1);
    const thirty = await search({ keyword: 'depth pair', depth: 30 });
    t.equal(thirty.submitted.cached, true, 'depth 30 from the older top 100');
    t.same(thirty.result.organic_results, deep.result.organic_results.slice(0, 30));
    t.equal(asked('depth pair'), DEFAULT_PAGES.length + 1, 'no page asked again');
  });

  t.test('bad depth: a 422 a human can act on, and nothing recorded', async (t) => {
    const events = new Database(join(data, 'events.db'), { readonly: true, fileMustExist: true });
    t.teardown(() => events.close());
    const count = () => (events.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
    const before = { events: count(), used: await used(), google: google.searches().length };
    const cases: Array<[unknown, RegExp]> = [
      [5, /depth must be at least 10/],
      [101, /depth must be at most 100/],
      ['abc', /depth must be a number of results: 10 to 100/],
      [25.5, /depth must be a whole number/],
    ];
    for (const [depth, detail] of cases) {
      const res = await submit(svc.url, key, { keyword: 'depth bad', depth });
      t.equal(res.status, 422, `depth ${JSON.stringify(depth)}`);
      const body = (await res.json()) as Json;
      t.match(body.detail, detail);
      t.match(body.errors, [{ path: 'depth' }]);
    }
    t.equal(count(), before.events, 'no event appended');
    t.equal(await used(), before.used, 'no quota taken');
    t.equal(google.searches().length, before.google, 'Google not asked');
  });

  t.test('the CLI takes --depth, and refuses one out of range before asking the service', async (t) => {
    const out = await cli(['search', 'depth cli', '--depth', '10', '--base-url', svc.url], { SERP_API_KEY: key });
    const result = JSON.parse(out) as Json;
    t.equal(result.search_metadata.parameters.depth, 10);
    t.equal(asked('depth cli'), 1);
    const bad = await cli(['search', 'depth cli', '--depth', '500', '--base-url', svc.url], {
      SERP_API_KEY: key,
    }).then(
      () => 'exit 0',
      (e: { stderr?: string }) => e.stderr ?? '',
    );
    t.match(bad, /--depth must be a whole number of results from 10 to 100/);
    const dir = tempDataDir('depth-batch');
    t.teardown(() => removeDir(dir));
    writeFileSync(join(dir, 'k.txt'), 'depth batch one\ndepth batch two\n');
    await cli(['batch', join(dir, 'k.txt'), '--out', join(dir, 'out.jsonl'), '--depth', '10', '--base-url', svc.url], {
      SERP_API_KEY: key,
    });
    const lines = readFileSync(join(dir, 'out.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    t.same(
      lines.map((l) => l.result.search_metadata.parameters.depth),
      [10, 10],
      'batch --depth: every keyword at that depth',
    );
    t.equal(asked('depth batch one') + asked('depth batch two'), 2, 'one Google request a keyword');
  });

  t.test("a monitor's depth reaches its crawls; its backfill takes only searches at least as deep", async (t) => {
    const [top10, top30] = ['depth monitor ten', 'depth monitor thirty'];
    const earlier10 = await search({ keyword: top10, depth: 10 });
    const earlier30 = await search({ keyword: top30, depth: 30 });
    t.same([asked(top10), asked(top30)], [1, 3], 'the earlier searches: one page and three');
    const api = monitorApi(svc.url, key);
    const created = await api.call('POST', '/monitors', {
      name: 'depth 20',
      keywords: [top10, top30],
      domains: ['wikipedia.org'],
      schedule: 'daily',
      depth: 20,
      backfill: true,
    });
    t.equal(created.status, 201, created.text.slice(0, 200));
    const id = created.json.monitor_id as string;
    // the backfill (one search) and the day's slot, in progress, run at once (two searches)
    const points = await api.waitForHistory(id, (p) => checks(p) >= 3, 60_000);
    const jobs = [...new Set(points.map((p) => p.job_id))];
    t.equal(jobs.length, 3, 'one backfilled search and one scheduled search a keyword');
    t.ok(jobs.includes(earlier30.submitted.job_id), 'the depth-30 search is backfilled: it covers the top 20');
    t.notOk(jobs.includes(earlier10.submitted.job_id), 'the depth-10 search is not: it cannot see positions 11–20');
    const scheduled = jobs.filter((j) => j !== earlier30.submitted.job_id);
    for (const jobId of scheduled) {
      const result = (await (await pollJob(svc.url, key, jobId)).json()) as Json;
      t.equal(result.search_metadata.parameters.depth, 20, 'the run searched at the monitor depth');
      t.equal(result.search_metadata.pages_fetched, 2, 'two Google pages');
      t.ok(result.organic_results.length <= 20, `at most 20 results (${result.organic_results.length})`);
    }
    t.same([asked(top10), asked(top30)], [1 + 2, 3 + 2], 'each keyword crawled two pages fresh, not ten');
  });

  t.test('stopped: projections rebuild writes the same read models from the log', async (t) => {
    await svc.stop();
    const dump = () => {
      const db = new Database(join(data, 'read.db'), { readonly: true });
      const rows = db.prepare('SELECT view, id, doc FROM docs ORDER BY view, id').all() as Json[];
      db.close();
      return rows;
    };
    const before = dump();
    t.ok(
      before.some((r) => r.view === 'resultCache' && JSON.parse(r.doc).entries.length === 2),
      'among them a cache key with a deep and a newer shallow answer',
    );
    await cli(['projections', 'rebuild', '--data', data]);
    t.same(dump(), before, 'byte for byte');
  });
});
