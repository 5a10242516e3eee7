import { get as httpGet } from 'node:http';
import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { cli, pollJob, startStack, submit } from '../support/service.js';

const missing = fixturesMissing();

t.test('a new user, end to end through a listening port', { skip: missing }, async (t) => {
  const { data, svc, mintKey } = await startStack(t);

  const created = await mintKey(['--tier', 'free', '--label', 'e2e']);
  t.match(created.key, /^sk_[0-9A-Za-z]{32}$/, 'the CLI prints the raw key once');
  const key: string = created.key;

  const res = await submit(svc.url, key, { keyword: 'coffee' });
  t.equal(res.status, 202);
  const job = (await res.json()) as { job_id: string; status: string; cached: boolean };
  t.match(job, { status: 'queued', cached: false });
  t.match(job.job_id, /^[0-9a-f]{24}$/);
  t.equal(res.headers.get('location'), `/v1/search/${job.job_id}`);

  const early = await fetch(`${svc.url}/v1/search/${job.job_id}?output=json`, { headers: { 'x-api-key': key } });
  if (early.status === 202)
    t.match(
      await early.json(),
      { job_id: job.job_id, status: 'running', queue: { lane: 'live', ahead: Number } },
      'running while crawling, with where it stands',
    );
  else await early.arrayBuffer();

  const done = await pollJob(svc.url, key, job.job_id, 'json');
  t.equal(done.status, 200);
  const native = (await done.json()) as Record<string, any>;
  t.same(
    Object.keys(native)
      .filter((k) => k !== 'ai_overview')
      .sort(),
    ['organic_results', 'search_metadata', 'serp_features'],
  );
  t.ok(native.organic_results.length >= 10, `organic results over the pages (${native.organic_results.length})`);
  t.same(
    native.organic_results.map((r: { position: number }) => r.position),
    native.organic_results.map((_: unknown, i: number) => i + 1),
    'positions run 1..N across pages',
  );
  t.match(native.organic_results[0], { position: 1, title: String, link: /^https?:\/\// });
  t.match(native.search_metadata, { id: job.job_id, status: 'done', cached: false, parameters: { keyword: 'coffee' } });
  t.notOk(JSON.stringify(native).includes(key), 'the key is never echoed');

  const paged = await fetch(`${svc.url}/v1/search/${job.job_id}?output=json&start=10`, {
    headers: { 'x-api-key': key },
  });
  const page2 = (await paged.json()) as Record<string, any>;
  t.ok(page2.organic_results.length <= 10 && page2.organic_results[0].position === 11, 'start=10 returns the next ten');

  const compat = (await (await pollJob(svc.url, key, job.job_id, 'compat')).json()) as Record<string, any>;
  t.ok(Array.isArray(compat.organic_results) && compat.organic_results.length === native.organic_results.length);
  t.ok(compat.search_metadata, 'compat has the SerpApi envelope');

  const html = (await (
    await fetch(`${svc.url}/v1/search/${job.job_id}`, { headers: { 'x-api-key': key } })
  ).json()) as {
    html_url: string;
    expires_at: string;
  };
  t.match(html.html_url, new RegExp(`/raw/${job.job_id}\\?expires=\\d+&signature=`), 'output=html is the default');
  const raw = await fetch(html.html_url);
  t.equal(raw.status, 200);
  t.equal(raw.headers.get('content-security-policy'), 'sandbox', "Google's page runs no script on our origin");
  t.equal(raw.headers.get('x-content-type-options'), 'nosniff');
  t.equal(raw.headers.get('content-encoding'), 'gzip', 'the stored gzip, sent as it is');
  t.equal(raw.headers.get('cache-control'), 'private', 'for whoever holds the link, no shared cache');
  const rawText = await raw.text();
  t.match(rawText, /<!-- serp-page start=0 url=\/search\?/, 'raw HTML keeps every page behind its marker');
  t.notMatch(rawText, /serp-page start=\d+ url=https?:/, 'markers name no origin (the fake Google’s, here)');
  t.equal(
    (await fetch(html.html_url.replace(/signature=[^&]+/, 'signature=forged'))).status,
    403,
    'a forged link is refused',
  );
  const forgedHost = await new Promise<string>((resolve, reject) => {
    const req = httpGet(
      `${svc.url}/v1/search/${job.job_id}`,
      { headers: { 'x-api-key': key, host: 'evil.example' } },
      (res) => {
        let body = '';
        res.on('data', (d) => {
          body += d;
        });
        res.on('end', () => resolve(body));
      },
    );
    req.on('error', reject);
  });
  t.equal(
    new URL((JSON.parse(forgedHost) as { html_url: string }).html_url).origin,
    new URL(svc.url).origin,
    "a forged Host never becomes the signed link's origin",
  );

  const usage1 = (await (
    await fetch(`${svc.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  ).json()) as Record<string, number>;
  t.match(usage1, { tier: 'free', monthly_quota: 250, used_this_month: 1, remaining: 249, rate_limit_per_min: 10 });

  const again = await submit(svc.url, key, { keyword: '  coffee ' });
  t.equal(again.status, 200, 'an identical search is answered from cache');
  const cached = (await again.json()) as { job_id: string; status: string; cached: boolean };
  t.match(cached, { status: 'done', cached: true });
  t.not(cached.job_id, job.job_id, 'with a job id of its own');
  const cachedResult = (await (await pollJob(svc.url, key, cached.job_id, 'json')).json()) as Record<string, any>;
  t.equal(cachedResult.search_metadata.cached, true);
  t.same(cachedResult.organic_results, native.organic_results);
  const usage2 = (await (await fetch(`${svc.url}/v1/usage`, { headers: { 'x-api-key': key } })).json()) as Record<
    string,
    number
  >;
  t.equal(usage2.used_this_month, 1, 'a cached answer costs no quota');

  const fresh = await submit(svc.url, key, { keyword: 'coffee', no_cache: true });
  t.equal(fresh.status, 202, 'no_cache bypasses the cache');
  await fresh.arrayBuffer();

  const revoke = await cli(['keys', 'revoke', created.key_id, '--data', data]);
  t.match(revoke, /revoked/);
  const after = await fetch(`${svc.url}/v1/usage`, { headers: { 'x-api-key': key } });
  t.equal(after.status, 401, 'a revoked key gets 401 on its very next request');
  t.match(await after.json(), { detail: /revoked/ });
  t.notOk(svc.stderr().includes(key), 'the logs never hold the raw key');
});
