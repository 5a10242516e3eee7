import t from 'tap';
import { withinOneMinute } from '../support/clock.js';
import { fixturesMissing } from '../support/fixtures.js';
import { pollJob, startStack, submit } from '../support/service.js';

const missing = fixturesMissing();

/**
 * One service for both: the per-minute rate (429 + Retry-After + RateLimit-* headers, on submissions only) and the
 * synchronous submit (`async: false`), which answers like a fetch, or 202 `running` when the wait runs out.
 */
t.test('per-minute rate and synchronous submit, through a listening port', { skip: missing }, async (t) => {
  const { svc, mintKey } = await startStack(t, { env: { SERP_SYNC_TIMEOUT_MS: '20000' } });
  const mint = (rate: number) => mintKey(['--tier', 'starter', '--rate', String(rate)]);

  t.test('the submission over the per-minute rate gets 429 with Retry-After', async (t) => {
    const { key } = await mint(3);
    // four submits in one of the limiter's minutes
    await withinOneMinute(5_000);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await submit(svc.url, key, { keyword: `rate test ${i}` });
      statuses.push(res.status);
      t.equal(res.headers.get('ratelimit-limit'), '3', 'RateLimit-Limit names the key’s rate');
      t.equal(res.headers.get('ratelimit-remaining'), String(2 - i), 'RateLimit-Remaining counts down');
      await res.arrayBuffer();
    }
    t.same(statuses, [202, 202, 202], 'three submissions within the rate are accepted');
    const over = await submit(svc.url, key, { keyword: 'rate test 4' });
    t.equal(over.status, 429);
    const body = (await over.json()) as { detail: string; code: string };
    t.equal(body.detail, 'rate limit exceeded');
    const retry = Number(over.headers.get('retry-after'));
    t.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After is 1..60 seconds (${retry})`);
    t.equal(over.headers.get('ratelimit-remaining'), '0');

    const usage = await fetch(`${svc.url}/v1/usage`, { headers: { 'x-api-key': key } });
    t.equal(usage.status, 200, 'reads are not counted against the submission rate');
    const u = (await usage.json()) as { used_this_month: number; rate_limit_per_min: number };
    t.equal(u.used_this_month, 3, 'the refused submission reserved no quota');
    t.equal(u.rate_limit_per_min, 3);

    const other = await mint(3);
    const res = await submit(svc.url, other.key, { keyword: 'rate test other key' });
    t.equal(res.status, 202, 'the rate is per key: another key is not affected');
    await res.arrayBuffer();
  });

  t.test('async: false waits and answers 200 with the result', async (t) => {
    const { key } = await mint(100);
    const res = await fetch(`${svc.url}/v1/search?output=json`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ keyword: 'sync coffee', async: false }),
    });
    t.equal(res.status, 200, 'the sync submit returns the finished job');
    const body = (await res.json()) as Record<string, any>;
    t.match(body.search_metadata, { status: 'done', cached: false, parameters: { keyword: 'sync coffee' } });
    t.ok(body.organic_results.length >= 10, `the parsed result inline (${body.organic_results.length} organic)`);

    const polled = (await (await pollJob(svc.url, key, body.search_metadata.id, 'json')).json()) as Record<string, any>;
    t.same(polled.organic_results, body.organic_results, 'the same result a later fetch returns');

    const compat = await fetch(`${svc.url}/v1/search?output=compat`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ keyword: 'sync coffee', async: false }),
    });
    t.equal(compat.status, 200, 'a repeated sync submit is answered from the cache at once');
    const c = (await compat.json()) as Record<string, any>;
    t.ok(c.search_metadata && Array.isArray(c.organic_results), 'output=compat on the POST shapes the answer');

    const link = await submit(svc.url, key, { keyword: 'sync coffee', async: false });
    t.equal(link.status, 200);
    t.match(await link.json(), { html_url: /\/raw\// }, 'without output, the sync answer is the html link, as a fetch');
  });

  t.test('async: false answers 202 running when the wait runs out', async (t) => {
    const slow = await startStack(t, {
      google: { latencyMs: 3_000 },
      env: { SERP_SYNC_TIMEOUT_MS: '500' },
      teardown: 'kill', // a clean stop would drain the 30-second crawl first
    });
    const svc2 = slow.svc;
    const { key } = await slow.mintKey(['--tier', 'starter']);
    const started = Date.now();
    const res = await submit(svc2.url, key, { keyword: 'slow sync', async: false });
    const waited = Date.now() - started;
    t.equal(res.status, 202, 'the sync wait is bounded');
    const body = (await res.json()) as { job_id: string; status: string };
    t.equal(body.status, 'running');
    t.match(body.job_id, /^[0-9a-f]{24}$/, 'with the job id to poll');
    t.ok(waited < 3_000, `it returned after the sync timeout, not the crawl (${waited} ms)`);
  });
});
