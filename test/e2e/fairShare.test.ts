import { randomBytes } from 'node:crypto';
import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { pollJob, startStack, submit } from '../support/service.js';

/**
 * Lanes and fair share through a listening port (docs/fleet.md#lanes-and-fair-share): the embedded service against a
 * fake Google answering each page after 150 ms, with two crawl slots a lane so a backlog builds at once. Another key's
 * backlog of top-100 searches does not hold up a one-page search; a bulk backlog does not hold up a live one; every
 * job says its lane and how long it waited; a queued job says where it stands; the metrics and the dashboard show
 * the lanes.
 */
const sample = (text: string, name: string, labels: Record<string, string> = {}) => {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const m = /^[^{ ]+(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (m && want.every((w) => (m[1] ?? '').split(',').includes(w))) total += Number(m[2]);
  }
  return total;
};

t.test('fair share › end to end', { skip: fixturesMissing('serp') }, async (t) => {
  const adminToken = `adm_${randomBytes(16).toString('hex')}`;
  const stack = await startStack(t, {
    google: { latencyMs: 150 },
    env: { SERP_ADMIN_TOKEN: adminToken, SERP_CRAWLER_CONCURRENCY: '2', SERP_ROUTE_MAX_IN_FLIGHT: '4' },
  });
  const url = stack.svc.url;
  // keys minted through the running service's admin API (a CLI process each would cost a second of CPU more)
  const mint = async (label: string) =>
    (
      (await (
        await fetch(`${url}/admin/api/keys`, {
          method: 'POST',
          headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ tier: 'enterprise', label }),
        })
      ).json()) as { key: string }
    ).key;
  const a = await mint('data team');
  const b = await mint('agent');
  const json = async (res: Response) => (await res.json()) as Record<string, unknown>;

  await t.test('an unknown priority is a 422 that says what it takes', async (t) => {
    const res = await submit(url, b, { keyword: 'coffee', priority: 'urgent' });
    t.equal(res.status, 422);
    t.match((await json(res)).detail, /priority must be "live" \(the default\) or "bulk"/);
    const compat = await fetch(`${url}/search.json?q=coffee&priority=urgent&api_key=${b}`);
    t.equal(compat.status, 400, "the compat surface answers in SerpApi's way");
    t.match((await json(compat)).error, /Unsupported `urgent` priority/);
  });

  // A's backlog: 16 top-100 searches of the live lane (no priority given), then 8 in bulk
  const backlog: string[] = [];
  let last: Record<string, unknown> = {};
  for (let i = 0; i < 16; i++) {
    const res = await submit(url, a, { keyword: `backlog ${i}`, no_cache: true });
    last = await json(res);
    backlog.push(String(last.job_id));
  }
  const bulk: string[] = [];
  for (let i = 0; i < 8; i++) {
    const res = await submit(url, a, { keyword: `bulk ${i}`, no_cache: true, priority: 'bulk' });
    bulk.push(String((await json(res)).job_id));
  }

  await t.test('a queued job says where it stands', async (t) => {
    t.match(last, { status: 'queued', queue: { lane: 'live', ahead: Number } }, 'the 202 of the last submit');
    // a poll once the read models hold the burst (the submit's own estimate is from the moment it was made)
    await new Promise((r) => setTimeout(r, 300));
    const polled = await fetch(`${url}/v1/search/${backlog[15]}`, { headers: { 'x-api-key': a } });
    t.equal(polled.status, 202);
    const body = await json(polled);
    t.match(body, { status: 'running', queue: { lane: 'live', ahead: Number } }, 'and its polls');
    const queue = body.queue as { ahead: number; estimated_start_s: number | null };
    t.ok(queue.ahead >= 5, `jobs ahead of the 16th: ${JSON.stringify(queue)}`);
  });

  const searchNow = (key: string, body: Record<string, unknown>) =>
    fetch(`${url}/v1/search?output=json`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, async: false }),
    });

  await t.test("another key's one-page search goes before the backlog", async (t) => {
    const res = await searchNow(b, { keyword: 'agent question', depth: 10 });
    t.equal(res.status, 200);
    const body = await json(res);
    const meta = (body as { search_metadata?: Record<string, unknown> }).search_metadata ?? {};
    t.match(
      meta,
      { status: 'done', lane: 'live', queued_ms: Number },
      `done, in the live lane, with its wait: ${JSON.stringify({ ...meta, parameters: undefined, information: undefined })}`,
    );
    const open = await Promise.all(
      backlog.map(async (id) => (await fetch(`${url}/v1/search/${id}`, { headers: { 'x-api-key': a } })).status),
    );
    t.ok(
      open.filter((s) => s === 202).length >= 8,
      `it ended while ${open.filter((s) => s === 202).length} of A's 16 were still waiting or crawling`,
    );
  });

  await t.test('a live search goes before a bulk backlog of its own key', async (t) => {
    const res = await searchNow(a, { keyword: 'a live one of A', depth: 10 });
    t.equal(res.status, 200);
    const bulkOpen = await Promise.all(
      bulk.map(async (id) => (await fetch(`${url}/v1/search/${id}`, { headers: { 'x-api-key': a } })).status),
    );
    t.ok(bulkOpen.filter((s) => s === 202).length >= 4, 'most of the bulk lane was still to do');
  });

  await t.test('the metrics and the dashboard show the lanes', async (t) => {
    const headers = { authorization: `Bearer ${adminToken}` };
    const text = await (await fetch(`${url}/metrics`, { headers })).text();
    t.ok(sample(text, 'serp_lane_jobs', { lane: 'bulk', state: 'waiting' }) >= 1, 'bulk jobs waiting');
    t.match(text, /^serp_lane_wait_seconds_count\{lane="live"\} [1-9]/m, 'live waits observed');
    const service = await json(await fetch(`${url}/admin/api/service`, { headers }));
    const lanes = service.lanes as Array<{ lane: string; waiting: number; top_keys: Array<{ label?: string }> }>;
    const bulkLane = lanes.find((l) => l.lane === 'bulk');
    t.ok(bulkLane && bulkLane.waiting >= 1, 'the bulk lane has jobs waiting');
    t.equal(bulkLane?.top_keys[0]?.label, 'data team', 'and names the key whose pages wait most');
    t.match(service.capacity, { basis: 'measured', routes: 1 }, 'the capacity measured on the direct route');
    t.equal((service.demand as unknown[]).length, 48, 'the last day and the next, hour by hour');
  });

  await t.test('both backlogs complete', async (t) => {
    const ends = await Promise.all(
      [...backlog, ...bulk].map(async (id) => (await pollJob(url, a, id, 'json', 240_000)).json()),
    );
    const statuses = ends.map((e) => (e as { search_metadata?: { status?: string } }).search_metadata?.status);
    t.same(
      statuses.filter((s) => s !== 'done'),
      [],
      `${statuses.length} jobs done`,
    );
    const lanes = ends.map((e) => (e as { search_metadata: { lane: string } }).search_metadata.lane);
    t.same(
      [lanes.filter((l) => l === 'live').length, lanes.filter((l) => l === 'bulk').length],
      [16, 8],
      'each in its lane',
    );
  });

  await t.test('a monitor past what the fleet can crawl is created, with a warning', async (t) => {
    const post = (body: unknown) =>
      fetch(`${url}/v1/monitors`, {
        method: 'POST',
        headers: { 'x-api-key': b, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const small = await post({ name: 'small', keywords: ['one'], domains: ['example.com'], schedule: 'daily' });
    t.equal(small.status, 201);
    t.notOk((await json(small)).warnings, 'one keyword a day: no warning');
    // the capacity measured here is a few hundred pages a minute: 3,000 keywords of ten pages every hour is far past it
    const big = await post({
      name: 'big',
      keywords: Array.from({ length: 3000 }, (_, i) => `keyword ${i}`),
      domains: ['example.com'],
      schedule: 'hourly',
    });
    t.equal(big.status, 201, 'created all the same');
    const body = await json(big);
    const warnings = body.warnings as string[] | undefined;
    t.equal(warnings?.length, 1, 'one warning');
    t.match(warnings?.[0], /pages an hour short, which about \d+ more routes? at \d+ requests a minute would close/);
    const patched = await fetch(`${url}/v1/monitors/${body.monitor_id}`, {
      method: 'PATCH',
      headers: { 'x-api-key': b, 'content-type': 'application/json' },
      body: JSON.stringify({ paused: true }),
    });
    t.notOk((await json(patched)).warnings, 'paused: it asks nothing of the fleet');
  });

  await t.test('a compat search in the bulk lane says so', async (t) => {
    const res = await fetch(`${url}/search.json?q=compat+bulk&num=10&priority=bulk&api_key=${b}`);
    t.equal(res.status, 200);
    t.match((await json(res)).search_metadata, { status: 'Success', lane: 'bulk', queued_ms: Number });
  });
});
