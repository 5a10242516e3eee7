import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parse as parseCsv } from 'csv-parse/sync';
import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { checks, monitorApi, type Point, positionIn } from '../support/ranks.js';
import { cli, pollJob, startService, startStack, submit } from '../support/service.js';

/**
 * Rank tracking end to end (docs/rank-tracking.md), through a listening port against the offline fake Google, whose
 * pages turn by one with every new search of a query (so positions move): a search made before the monitor existed
 * (backfill), the monitor's first scheduled run, a manual run, and a manual run Google blocks. History (JSON and
 * CSV), visibility and changes agree with the jobs' own results; the blocked run is `failed`, never a position;
 * `projections rebuild` gives the same answers.
 */
const missing = fixturesMissing();
const KEYWORD = 'rank tracking e2e';
const DOMAINS = ['merriam-webster.com', '*.wikipedia.org', 'vocabulary.com'];

t.test('a monitor over the fake Google', { skip: missing }, async (t) => {
  const stack = await startStack(t, {
    google: { rotate: true },
    env: { SERP_MONITOR_TICK_MS: '200' },
  });
  let base = stack.svc.url;
  const { key } = await stack.mintKey(['--tier', 'pro']);
  const other = await stack.mintKey(['--tier', 'pro']);
  let api = monitorApi(base, key);

  // a search made before the monitor exists
  const earlier = (await (await submit(base, key, { keyword: KEYWORD })).json()) as { job_id: string };
  t.equal((await pollJob(base, key, earlier.job_id)).status, 200, 'the earlier search ends');

  const created = await api.call('POST', '/monitors', {
    name: 'e2e',
    keywords: [KEYWORD],
    domains: DOMAINS,
    schedule: 'daily',
    backfill: true,
  });
  t.equal(created.status, 201, `created: ${created.text.slice(0, 200)}`);
  const id = created.json.monitor_id as string;
  t.match(created.headers.get('location'), `/v1/monitors/${id}`);

  const after2 = await api.waitForHistory(id, (p) => checks(p) >= 2);
  t.equal(checks(after2), 2, 'the backfilled search and the first scheduled run');
  t.equal(after2[0].job_id, earlier.job_id, 'backfill: the earlier search is the first point');
  t.ok(after2[0].checked_at < created.json.created_at, 'at its own crawl time, before the monitor existed');

  const run = await api.call('POST', `/monitors/${id}/runs`, {});
  t.equal(run.status, 202);
  t.match(run.json, { run_id: /^run_/, jobs: [{ keyword: KEYWORD, job_id: /^[0-9a-f]{24}$/ }] });
  const after3 = await api.waitForHistory(id, (p) => checks(p) >= 3);
  t.equal(checks(after3), 3, 'the manual run is recorded');

  stack.google.setMode({ trouble: { kind: 'captcha' }, query: KEYWORD });
  const blocked = await api.call('POST', `/monitors/${id}/runs`, {});
  const blockedJob = blocked.json.jobs[0].job_id as string;
  const all = await api.waitForHistory(id, (p) => checks(p) >= 4);
  stack.google.setMode({});
  t.equal(all.length, 4 * DOMAINS.length, 'one point per keyword × domain × search');

  await t.test('history agrees with each job’s own result; the blocked search is failed', async (t) => {
    const sorted = [...all].sort((a, b) => a.checked_at.localeCompare(b.checked_at));
    t.same(all, sorted, 'oldest first');
    for (const jobId of new Set(all.map((p) => p.job_id))) {
      const body = (await (await pollJob(base, key, jobId)).json()) as any;
      const points = all.filter((p) => p.job_id === jobId);
      if (jobId === blockedJob) {
        t.equal(body.status, 'failed', 'the blocked job failed');
        for (const p of points) {
          t.match(p, { status: 'failed', position: null, url: null, failure: 'captcha', features: [] });
        }
        continue;
      }
      for (const p of points) {
        const own = positionIn(body.organic_results, p.domain);
        t.same(
          [p.status, p.position, p.url],
          own ? ['ranked', own.position, own.url] : ['not_ranked', null, null],
          `${p.domain} in ${jobId}`,
        );
      }
    }
    const positions = all.filter((p) => p.domain === 'merriam-webster.com' && p.status === 'ranked');
    t.ok(new Set(positions.map((p) => p.position)).size > 1, `positions moved: ${positions.map((p) => p.position)}`);
  });

  await t.test('CSV holds the same points, the whole history', async (t) => {
    const res = await fetch(`${base}/v1/monitors/${id}/history?format=csv`, { headers: { 'x-api-key': key } });
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /text\/csv/);
    const text = await res.text();
    t.equal(
      text.split('\n')[0],
      'keyword,domain,checked_at,status,position,url,failure,job_id,pixels_from_top,above_the_fold',
    );
    const rows = parseCsv(text, { columns: true }) as Record<string, string>[];
    t.same(
      rows,
      all.map((p) => ({
        keyword: p.keyword,
        domain: p.domain,
        checked_at: p.checked_at,
        status: p.status,
        position: p.position === null ? '' : String(p.position),
        url: p.url ?? '',
        failure: p.failure ?? '',
        job_id: p.job_id,
        // not measured in pixels: the fold's columns are empty
        pixels_from_top: '',
        above_the_fold: '',
      })),
    );
    const one = await api.history(
      id,
      `?domain=${encodeURIComponent('*.wikipedia.org')}&keyword=${encodeURIComponent(KEYWORD)}`,
    );
    t.same(
      one.points,
      all.filter((p) => p.domain === '*.wikipedia.org'),
      'filtered by keyword and domain',
    );
  });

  await t.test('visibility and changes follow from the points', async (t) => {
    const vis = (await api.call('GET', `/monitors/${id}/visibility`)).json;
    const curve = created.json.ctr_curve as number[];
    for (const { domain, days } of vis.domains) {
      for (const day of days) {
        const ok = all.filter((p) => p.domain === domain && p.status !== 'failed' && p.checked_at.startsWith(day.date));
        const last = ok[ok.length - 1];
        t.equal(day.keywords, 1, `${domain} ${day.date}: one keyword`);
        t.equal(day.ranked, last.status === 'ranked' ? 1 : 0);
        t.equal(day.average_position, last.position);
        t.equal(day.share_of_voice, last.position && last.position <= 20 ? curve[last.position - 1] : 0);
      }
    }
    const ch = (await api.call('GET', `/monitors/${id}/changes?min_move=1`)).json;
    const successes = [...new Set(all.filter((p) => p.status !== 'failed').map((p) => p.job_id))];
    const failedAt = all.find((p) => p.status === 'failed')?.checked_at;
    t.notOk(
      ch.changes.some((c: any) => c.at === failedAt),
      'a failed search is never a change',
    );
    for (const domain of DOMAINS) {
      const seq = successes.map((j) => all.find((p) => p.job_id === j && p.domain === domain) as Point);
      const moves = ch.changes.filter((c: any) => c.domain === domain && c.kind === 'moved');
      const expected = seq
        .slice(1)
        .map((p, i) => [seq[i].position, p.position])
        .filter(([a, b]) => a !== null && b !== null && a !== b);
      t.same(
        moves.map((c: any) => [c.from_position, c.to_position]),
        expected,
        `${domain}: moves`,
      );
      const ranked = seq.filter((p) => p.position !== null).sort((a, b) => (a.position ?? 0) - (b.position ?? 0));
      const best = ch.best.find((b: any) => b.domain === domain);
      if (ranked.length) t.match(best, { position: ranked[0].position, keyword: KEYWORD });
      else t.notOk(best, `${domain} never ranked: no best`);
    }
  });

  await t.test('MCP serp_rank_history answers the same positions, compactly', async (t) => {
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { 'x-api-key': key } },
    });
    const client = new Client({ name: 'rank-test', version: '1.0.0' });
    await client.connect(transport);
    t.teardown(() => client.close());
    const byId = (await client.callTool({ name: 'serp_rank_history', arguments: { monitor_id: id } })) as any;
    t.notOk(byId.isError, 'by monitor id');
    const series = byId.structuredContent.series as Array<{ domain: string; points: [string, unknown][] }>;
    t.equal(series.length, DOMAINS.length, 'one series per keyword × domain');
    for (const s of series) {
      const mine = all.filter((p) => p.domain === s.domain);
      t.same(
        s.points,
        mine.map((p) => [p.checked_at, p.status === 'ranked' ? p.position : p.status]),
        `${s.domain}: the history's points`,
      );
    }
    const byKeyword = (await client.callTool({
      name: 'serp_rank_history',
      arguments: { keyword: KEYWORD, domain: 'merriam-webster.com' },
    })) as any;
    t.equal(byKeyword.structuredContent.series.length, 1, 'by keyword and domain across the key’s monitors');
    t.match(byKeyword.content[0].text, /merriam-webster\.com.*best \d+/);
    const bad = (await client.callTool({ name: 'serp_rank_history', arguments: { keyword: KEYWORD } })) as any;
    t.ok(bad.isError, 'keyword without domain or monitor_id is an error result');
  });

  await t.test('another key gets 404 for this monitor', async (t) => {
    const theirs = monitorApi(base, other.key);
    for (const path of ['', '/history', '/visibility', '/changes']) {
      t.equal((await theirs.call('GET', `/monitors/${id}${path}`)).status, 404, `GET ${path || '/'}`);
    }
    t.equal((await theirs.call('POST', `/monitors/${id}/runs`, {})).status, 404);
    t.equal((await theirs.call('DELETE', `/monitors/${id}`)).status, 404);
    t.same((await theirs.call('GET', '/monitors')).json, { monitors: [] });
  });

  await t.test('the CLI lists the monitor and charts its history', async (t) => {
    const env = { SERP_API_KEY: key, SERP_API_BASE_URL: base };
    const list = JSON.parse(await cli(['monitors', 'list', '--json'], env)) as Array<{ monitor_id: string }>;
    t.same(
      list.map((m) => m.monitor_id),
      [id],
    );
    const chart = await cli(['monitors', 'history', id, '--chart'], env);
    t.match(chart, /fail ┤\s*x/, 'the failed search is an x on the fail row, not a position');
    t.match(chart, /A merriam-webster\.com {3}B \*\.wikipedia\.org/);
    const csv = await cli(['monitors', 'history', id, '--csv'], env);
    t.equal(csv.trim().split('\n').length, 1 + all.length, 'the CSV: a header and every point');
  });

  await t.test('projections rebuild gives the same answers', async (t) => {
    const paths = [
      `/monitors/${id}/history`,
      `/monitors/${id}/visibility`,
      `/monitors/${id}/changes?min_move=1`,
      `/monitors/${id}`,
    ];
    const before = await Promise.all(paths.map(async (p) => (await api.call('GET', p)).text));
    await stack.svc.stop();
    t.match(await cli(['projections', 'rebuild', '--data', stack.data]), /rebuilt/);
    const again = await startService(stack.data, { SERP_GOOGLE_ORIGIN: stack.google.origin });
    t.teardown(() => again.stop());
    base = again.url;
    api = monitorApi(base, key);
    const after = await Promise.all(paths.map(async (p) => (await api.call('GET', p)).text));
    t.same(after, before);
  });
});
