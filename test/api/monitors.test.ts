import t from 'tap';
import { buildTestApp } from '../support/app.js';

/** Bad input on /v1/monitors gets a clear 4xx and changes nothing (docs/rank-tracking.md); tier limits are 422s. */
t.test('monitors › bad input', async (t) => {
  const { app, mintKey } = await buildTestApp(t);
  const key = await mintKey('free');
  const call = async (method: string, url: string, body?: unknown) => {
    const res = await app.inject({
      method: method as 'GET',
      url: `/v1${url}`,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    return {
      status: res.statusCode,
      json: (res.body ? res.json() : {}) as { detail: string; code: string } & Record<string, any>,
    };
  };
  const good = { name: 'n', keywords: ['coffee'], domains: ['example.com'], schedule: 'daily' };
  const list = async () => (await call('GET', '/monitors')).json.monitors as unknown[];

  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['an empty keyword list', { keywords: [] }, /keywords must not be empty/],
    [
      'more keywords than the tier allows',
      { keywords: Array.from({ length: 11 }, (_, i) => `k${i}`) },
      /allows 10 keywords per monitor/,
    ],
    [
      'more than 10,000 keywords',
      { keywords: Array.from({ length: 10_001 }, (_, i) => `k${i}`) },
      /at most 10000 keywords/,
    ],
    ['a duplicate keyword', { keywords: ['coffee', ' coffee '] }, /duplicate keyword "coffee"/],
    ['a domain with a scheme', { domains: ['https://example.com'] }, /host \("example\.com"\)/],
    ['a domain that is not a host', { domains: ['not a host'] }, /host/],
    ['a cron that does not parse', { schedule: { cron: '61 * * * *', timezone: 'UTC' } }, /does not parse/],
    ['a cron with six fields', { schedule: { cron: '0 0 * * * *', timezone: 'UTC' } }, /five fields/],
    ['a cron more often than hourly', { schedule: { cron: '*/30 * * * *' } }, /more often than hourly/],
    ['an unknown timezone', { schedule: { cron: '0 6 * * 1-5', timezone: 'Mars/Olympus' } }, /unknown timezone/],
    ['location and uule', { location: 'Germany', uule: 'w+CAIQICIHR2VybWFueQ' }, /either location or uule/],
    ['lat without lon', { lat: 52.5 }, /lat and lon must be given together/],
    ['an unknown location', { location: 'Nowhere Land, Atlantis' }, /unknown location/],
    ['a depth over 100', { depth: 200 }, /depth is 10–100/],
    ['an unknown member', { colour: 'blue' }, /colour|unrecognized/i],
    ['a ctr curve over 20 positions', { ctr_curve: Array(21).fill(0.1) }, /positions 1–20/],
  ];
  for (const [what, change, detail] of cases) {
    const res = await call('POST', '/monitors', { ...good, ...change });
    t.equal(res.status, 422, `${what}: 422`);
    t.match(res.json.detail, detail, `${what}: ${res.json.detail}`);
  }
  t.same(await list(), [], 'none of them created a monitor');

  const created = await call('POST', '/monitors', {
    ...good,
    schedule: { cron: '0 6 * * 1-5', timezone: 'Europe/Berlin' },
  });
  t.equal(created.status, 201, 'a good monitor with a cron in a time zone');
  t.match(created.json, { schedule: { cron: '0 6 * * 1-5', timezone: 'Europe/Berlin' }, depth: 100, backfill: 'none' });
  t.match(created.json.next_run_at, /T0[45]:00:00\.000Z$/, 'the next slot is 06:00 in Berlin');
  const id = created.json.monitor_id as string;
  t.equal((await call('POST', '/monitors', good)).status, 201, 'a second one');
  const third = await call('POST', '/monitors', good);
  t.equal(third.status, 422, 'a third is over the free tier');
  t.match(third.json, { code: 'SERP_MONITOR_LIMIT', detail: /allows 2 monitors per key/ });
  t.equal((await list()).length, 2);

  const patches: Array<[string, Record<string, unknown>, RegExp]> = [
    ['nothing', {}, /at least one change/],
    ['adding a tracked keyword', { add_keywords: ['coffee'] }, /already tracked/],
    ['removing an untracked keyword', { remove_keywords: ['tea'] }, /not tracked/],
    ['removing the last keyword', { remove_keywords: ['coffee'] }, /at least one keyword/],
    ['too many keywords', { add_keywords: Array.from({ length: 10 }, (_, i) => `x${i}`) }, /allows 10 keywords/],
    ['removing the last domain', { remove_domains: ['example.com'] }, /at least one domain/],
    ['a bad schedule', { schedule: { cron: '* * * * *' } }, /more often than hourly/],
  ];
  for (const [what, body, detail] of patches) {
    const res = await call('PATCH', `/monitors/${id}`, body);
    t.equal(res.status, 422, `PATCH ${what}: 422`);
    t.match(res.json.detail, detail, `PATCH ${what}: ${res.json.detail}`);
  }
  const unchanged = await call('GET', `/monitors/${id}`);
  t.match(
    unchanged.json,
    { keywords: ['coffee'], domains: ['example.com'], paused: false },
    'the monitor is as it was',
  );

  const patched = await call('PATCH', `/monitors/${id}`, {
    add_keywords: ['tea'],
    add_domains: ['*.rival.com', 'example.org/blog/'],
    paused: true,
    ctr_curve: [0.5, 0.2],
  });
  t.equal(patched.status, 200);
  t.match(patched.json, {
    keywords: ['coffee', 'tea'],
    domains: ['example.com', '*.rival.com', 'example.org/blog/'],
    paused: true,
    next_run_at: null,
    ctr_curve: [0.5, 0.2],
  });

  for (const q of ['from=2026-03-02&to=2026-03-01', 'from=yesterday', 'min_move=0']) {
    const res = await call('GET', `/monitors/${id}/changes?${q}`);
    t.equal(res.status, 422, `changes?${q}: 422 (${res.json.detail})`);
  }
  t.equal((await call('GET', `/monitors/${id}/history?from=2026-03-02&to=2026-03-01`)).status, 422);
  t.equal((await call('GET', `/monitors/${id}/history?domain=${encodeURIComponent('http://x')}`)).status, 422);
  t.equal((await call('GET', `/monitors/${id}/visibility?from=2026-03-02T00:00:00Z&to=2026-03-01`)).status, 422);
  t.equal((await call('GET', '/monitors/mon_nope')).status, 404, 'an unknown monitor');

  const run = await call('POST', `/monitors/${id}/runs`, { no_cache: false });
  t.equal(run.status, 202, 'a manual run of a paused monitor still runs');
  t.equal(run.json.jobs.length, 2);
  const gaps = run.json.jobs.map((j: { submit_at: string }) => Date.parse(j.submit_at));
  t.equal(gaps[1] - gaps[0], 6000, 'paced under the free rate (10 a minute)');

  t.equal((await call('DELETE', `/monitors/${id}`)).status, 204);
  t.equal((await call('GET', `/monitors/${id}`)).status, 404, 'gone');
  t.equal((await call('DELETE', `/monitors/${id}`)).status, 404, 'deleting twice: 404');
  t.equal((await list()).length, 1);
});
