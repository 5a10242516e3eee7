import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import t from 'tap';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createMetrics } from '../../services/metrics/metrics.js';
import { fixturesMissing } from '../support/fixtures.js';
import { cli, pollJob, removeDir, startStack, submit, tempDataDir } from '../support/service.js';

/** one sample's value from Prometheus's text format, 0 when absent */
const sample = (text: string, name: string, labels: Record<string, string> = {}) => {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const m = /^[^{ ]+(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const have = (m[1] ?? '').split(',');
    if (want.every((w) => have.includes(w))) total += Number(m[2]);
  }
  return total;
};

t.test('metrics › counters from the event log, whatever process appended', async (t) => {
  const dir = tempDataDir('serp-metrics');
  const store = createSqliteEventStore({ path: join(dir, 'events.db'), pollIntervalMs: 20 });
  const metrics = createMetrics({ processMetrics: false });
  t.teardown(async () => {
    await metrics.stop();
    await store.close();
    removeDir(dir);
  });
  await store.appendToStream('old', [{ type: 'SearchAnsweredFromCache', data: {} }]);
  await metrics.follow(store);
  const now = new Date().toISOString();
  await store.appendToStream('searchJob-j1', [
    { type: 'CrawlStarted', data: { jobId: 'j1', attempt: 1, worker: 'w', startedAt: now } },
    {
      type: 'CrawlFailed',
      data: {
        jobId: 'j1',
        attempt: 1,
        reason: 'captcha',
        failure: { code: 'SERP_CRAWL_BLOCKED', kind: 'captcha' },
        final: true,
        failedAt: now,
      },
    },
  ]);
  const deadline = Date.now() + 5_000;
  let text = '';
  while (Date.now() < deadline) {
    text = await metrics.registry.metrics();
    if (sample(text, 'serp_crawls_total', { outcome: 'failed' }) > 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  t.equal(sample(text, 'serp_crawls_total', { outcome: 'failed', kind: 'captcha' }), 1, 'a final CAPTCHA failure');
  t.equal(sample(text, 'serp_crawl_attempt_failures_total', { kind: 'captcha', final: 'true' }), 1);
  t.equal(sample(text, 'serp_cache_hits_total'), 0, 'events before the start are not counted');
});

t.test(
  'metrics › /metrics behind the admin token; the counters move; one log line per request',
  { skip: fixturesMissing('serp') },
  async (t) => {
    const adminToken = `adm_${randomBytes(16).toString('hex')}`;
    const stack = await startStack(t, { env: { SERP_ADMIN_TOKEN: adminToken, SERP_LOG_LEVEL: 'info' } });
    const url = stack.svc.url;
    const { key, key_id } = JSON.parse(
      await cli(['keys', 'create', '--tier', 'pro', '--json', '--data', stack.data], { SERP_ADMIN_TOKEN: adminToken }),
    ) as { key: string; key_id: string };
    const scrape = async () => {
      const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } });
      t.equal(res.status, 200);
      t.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
      return res.text();
    };
    t.equal((await fetch(`${url}/metrics`)).status, 401, 'no token: 401');
    t.equal(
      (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${key}` } })).status,
      401,
      'an API key is not the admin token',
    );

    const before = await scrape();
    const keyword = `metrics ${randomBytes(3).toString('hex')}`;
    const jobs: string[] = [];
    for (const k of [keyword, `${keyword} two`, keyword]) {
      const res = await submit(url, key, { keyword: k });
      const body = (await res.json()) as { job_id: string };
      jobs.push(body.job_id);
      await (await pollJob(url, key, body.job_id)).arrayBuffer();
    }
    t.match(before, /^serp_stored_answers_bytes\{state="used"\} 0$/m, 'no stored answer before any result was read');
    for (const id of jobs) {
      const res = await fetch(`${url}/v1/search/${id}?output=json`, { headers: { 'x-api-key': key } });
      t.equal(res.status, 200);
      await res.arrayBuffer();
    }
    const after = await scrape();
    t.ok(
      sample(after, 'serp_stored_answers_bytes', { state: 'used' }) > 1000,
      'the finished results read as json are held as stored answers, their bytes counted',
    );
    t.equal(sample(after, 'serp_stored_answers_bytes', { state: 'bound' }), 64 * 2 ** 20, 'against their 64 MB bound');
    const delta = (name: string, labels?: Record<string, string>) =>
      sample(after, name, labels) - sample(before, name, labels);
    t.equal(delta('serp_submits_total', { charged: 'true' }), 2, 'two charged submits');
    t.equal(delta('serp_cache_hits_total'), 1, 'the repeat came from the cache');
    t.equal(delta('serp_crawls_total', { outcome: 'done' }), 2, 'two crawls done');
    t.equal(delta('serp_pages_fetched_total', { status: '2xx' }), 20, 'ten pages each');
    t.ok(delta('serp_crawl_duration_seconds_count') >= 2, 'crawl time observed');
    t.ok(delta('serp_http_requests_total', { route: '/v1/search', method: 'POST', status: '202' }) >= 2);
    t.ok(delta('serp_http_request_duration_seconds_count', { route: '/v1/search/:job_id' }) >= 3, 'latency by route');
    t.match(after, /^serp_queue_depth\{state="pending"\} \d+$/m, 'queue depth');
    t.match(after, /^serp_queue_oldest_pending_seconds \d/m, 'queue age');
    t.match(after, /^serp_projection_lag_positions \d+$/m, 'projection lag');
    t.match(after, /^serp_process_resident_memory_bytes \d/m, 'process metrics');
    t.match(
      after,
      /^# HELP serp_retention_sweeps_total /m,
      'the background workers’ metrics, from the pipeline thread',
    );

    const deadline = Date.now() + 5_000;
    while (!stack.svc.stdout().includes('"crawl finished"') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const lines = stack.svc
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const submits = lines.filter((l) => l.msg === 'request' && l.route === '/v1/search' && l.method === 'POST');
    t.ok(submits.length >= 3, `${submits.length} submit lines`);
    t.match(submits[0], { status: 202, keyId: key_id, jobId: jobs[0] }, 'route, status, key id and job id');
    t.type(submits[0].ms, 'number', 'and the time');
    // JSON.parse keeps the last of two equal keys: count them in the line itself
    const line = stack.svc
      .stdout()
      .split('\n')
      .find((l) => l.includes('"msg":"request"'));
    t.equal(line?.match(/"reqId"/g)?.length, 1, `one reqId per line: ${line}`);
    const polls = lines.filter((l) => l.msg === 'request' && l.route === '/v1/search/:job_id');
    t.ok(
      polls.some((l) => l.jobId === jobs[1] && l.status === 200),
      'a poll line names its job',
    );
    t.ok(
      lines.some((l) => l.msg === 'crawl finished' && l.outcome === 'done' && l.jobId === jobs[0]),
      'a crawl outcome line',
    );
    t.notOk(stack.svc.stdout().includes(key), 'the raw key is never logged');
    t.notOk(
      lines.some((l) => l.msg === 'incoming request'),
      "Fastify's own two lines per request are off",
    );
    t.notMatch(stack.svc.stderr(), /FSTDEP/, 'and no Fastify deprecation is on stderr (FSTDEP023 was)');
  },
);
