import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { cli, pollJob, startStack, submit } from '../support/service.js';

const missing = fixturesMissing();

/** What a user sees when Google will not answer: a failed job with a reason, its quota back, and no stored page. */
t.test('an origin that always blocks, through a listening port', { skip: missing }, async (t) => {
  const { google, data, svc, mintKey } = await startStack(t, { google: { trouble: { kind: 'captcha' } } });
  const { key } = await mintKey(['--tier', 'free']);
  const usage = async () =>
    (
      (await (await fetch(`${svc.url}/v1/usage`, { headers: { 'x-api-key': key } })).json()) as {
        used_this_month: number;
      }
    ).used_this_month;

  const res = await submit(svc.url, key, { keyword: 'always blocked' });
  t.equal(res.status, 202);
  const { job_id: jobId } = (await res.json()) as { job_id: string };
  t.equal(await usage(), 1, 'the submission reserves one search');

  const done = await pollJob(svc.url, key, jobId, 'json', 240_000);
  t.equal(done.status, 200, 'a failed job is a terminal 200, not an error status');
  const body = (await done.json()) as { job_id: string; status: string; detail: string };
  t.match(body, { job_id: jobId, status: 'failed' });
  t.match(body.detail, /block|captcha|sorry/i, `the detail says why (${body.detail})`);
  t.notMatch(body.detail, new URL(google.origin).host, 'the detail never names the origin it fetched from');
  t.notMatch(body.detail, /https?:|SERP_CRAWL_/, 'nor a URL or an internal error code');
  t.ok(google.searches().length > 1, `blocked pages were retried (${google.searches().length} requests)`);

  let used = await usage();
  for (let i = 0; i < 50 && used !== 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    used = await usage();
  }
  t.equal(used, 0, 'the quota is released');

  const compat = (await (await pollJob(svc.url, key, jobId, 'compat')).json()) as Record<string, any>;
  t.match(compat, { search_metadata: { id: jobId, status: 'Error' }, error: String }, 'compat: SerpApi’s error shape');
  t.equal(compat.error, body.detail, 'compat: the same public line');
  t.match(compat.search_metadata, { created_at: /UTC$/, json_endpoint: `${svc.url}/searches/${jobId}.json` });

  // the compat surface: /search answers a failed search with SerpApi's 503 Error document (asked here by search_id,
  // as a pagination link would, so no second blocked crawl runs); the archive answers the stored document with 200
  const sync = await fetch(
    `${svc.url}/search.json?q=${encodeURIComponent('always blocked')}&search_id=${jobId}&api_key=${key}`,
  );
  t.equal(sync.status, 503, 'compat /search: a failed search is a 503, as SerpApi answers');
  t.match(await sync.json(), { search_metadata: { id: jobId, status: 'Error' }, error: body.detail });
  const archived = await fetch(`${svc.url}/searches/${jobId}.json?api_key=${key}`);
  t.equal(archived.status, 200, 'the archive answers the stored Error document');
  t.match(await archived.json(), { search_metadata: { id: jobId, status: 'Error' }, error: body.detail });
  const html = (await (await pollJob(svc.url, key, jobId, 'html')).json()) as Record<string, unknown>;
  t.notOk('html_url' in html, 'no raw HTML link: a block page is never stored as a result');

  const audit = JSON.parse(
    await cli(['audit', 'usage', '--month', new Date().toISOString().slice(0, 7), '--json', '--data', data]),
  ) as { reserved: number; released: number; charged: number; projected: number; discrepancies: unknown[] }[];
  // charged counts submissions that reserved quota; the release is what brings the month back to 0
  t.match(audit, [{ reserved: 1, released: 1, charged: 1, projected: 0, discrepancies: [] }], 'audit usage agrees');
});
