import { brotliDecompressSync } from 'node:zlib';
import t from 'tap';
import { startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { pollJob, removeDir, startService, submit, tempDataDir } from '../support/service.js';

/**
 * The pipeline thread (the default, SERP_PIPELINE_THREAD=1) through the service: the projector, dispatcher, queue,
 * crawl worker and retention run on a thread of their own, with their own connections to the same files. What a client
 * sees must not change: the answers the thread renders are the bytes the HTTP thread renders itself (checked by
 * serving the same data directory again without the thread, SERP_PIPELINE_THREAD=0), a revoked key is refused on its
 * next request, and an acknowledged submit survives kill -9.
 */
const ADMIN = 'pipeline-thread-test-admin-token';

t.test(
  'the pipeline thread (the default): the write side on its own thread, the same answers',
  { skip: fixturesMissing() },
  async (t) => {
    const google = await startFakeGoogle();
    const data = tempDataDir('pipeline-thread');
    t.teardown(async () => {
      await google.close();
      removeDir(data);
    });
    const env = { SERP_GOOGLE_ORIGIN: google.origin, SERP_ADMIN_TOKEN: ADMIN };
    let svc = await startService(data, env);
    t.teardown(() => svc.stop());
    const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
    const mint = async () =>
      (await (
        await fetch(`${svc.url}/admin/api/keys`, {
          method: 'POST',
          headers: admin,
          body: JSON.stringify({ tier: 'pro' }),
        })
      ).json()) as { key: string; key_id: string };
    const minted = await mint();
    const headers = { 'x-api-key': minted.key };

    // a location is resolved on the HTTP thread (the geotargets stay there) and reaches the crawl on the other
    const { job_id } = (await (
      await submit(svc.url, minted.key, { keyword: 'coffee', location: 'Austin, Texas, United States' })
    ).json()) as { job_id: string };
    // the submit is projected on the other thread; a usage read right after it still counts it (read-your-writes)
    const usageNow = (await (await fetch(`${svc.url}/v1/usage`, { headers })).json()) as { used_this_month: number };
    t.equal(usageNow.used_this_month, 1, '/v1/usage right after the submit counts it');
    const accountNow = (await (await fetch(`${svc.url}/account?api_key=${minted.key}`)).json()) as {
      this_month_usage: number;
    };
    t.equal(accountNow.this_month_usage, 1, 'compat /account too');
    const done = await pollJob(svc.url, minted.key, job_id, 'json');
    t.equal(done.status, 200);
    const firstEtag = done.headers.get('etag');
    const firstBody = Buffer.from(await done.arrayBuffer());
    const result = JSON.parse(firstBody.toString('utf8')) as {
      search_metadata: Record<string, unknown>;
      organic_results: unknown[];
    };
    t.match(result.search_metadata, {
      id: job_id,
      status: 'done',
      pages_fetched: 10,
      targeting: { location: 'Austin,Texas,United States' },
    });
    t.ok(result.organic_results.length >= 90, `organic results: ${result.organic_results.length}`);
    t.ok(firstEtag, 'the answer rendered on the pipeline thread carries its ETag');

    // compressed as the client asks, by the thread, the first time this output is asked for
    const compatBr = await fetch(`${svc.url}/v1/search/${job_id}?output=compat&start=10`, {
      headers: { ...headers, 'accept-encoding': 'br' },
    });
    t.equal(compatBr.status, 200);
    t.equal(compatBr.headers.get('content-encoding'), 'br');
    const compatBytes = Buffer.from(await compatBr.arrayBuffer());
    // fetch() may or may not decode br by itself; either way the text must be the compat result
    const compatText = compatBytes[0] === 0x7b ? compatBytes.toString() : brotliDecompressSync(compatBytes).toString();
    const compat = JSON.parse(compatText) as { search_metadata: { id: string }; organic_results: unknown[] };
    t.equal(compat.search_metadata.id, job_id);
    t.equal(compat.organic_results.length, 10, 'start=10 sliced one page');

    // 304 for the ETag the thread computed
    const again = await fetch(`${svc.url}/v1/search/${job_id}?output=json`, {
      headers: { ...headers, 'if-none-match': firstEtag ?? '' },
    });
    t.equal(again.status, 304);
    await again.arrayBuffer();

    // the raw HTML the thread's crawl worker stored, and the usage the thread projected
    const { html_url } = (await (await fetch(`${svc.url}/v1/search/${job_id}`, { headers })).json()) as {
      html_url: string;
    };
    const raw = await (await fetch(html_url)).text();
    t.equal(raw.match(/<!-- serp-page start=\d+ /g)?.length, 10, 'the raw HTML holds every page');
    const usage = (await (await fetch(`${svc.url}/v1/usage`, { headers })).json()) as { used_this_month: number };
    t.equal(usage.used_this_month, 1);

    // the queue lives on the thread: /metrics asks it
    const metrics = await (await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
    t.match(metrics, /serp_queue_depth\{state="pending"\} 0/);
    t.match(metrics, /serp_projection_lag_positions 0/);

    // a revocation is projected on the thread; the admin api answers only once it is, so the very next request is refused
    const other = await mint();
    const before = await fetch(`${svc.url}/v1/usage`, { headers: { 'x-api-key': other.key } });
    t.equal(before.status, 200, 'a key minted on the HTTP thread is found once the thread projected it');
    await before.arrayBuffer();
    const revoked = await fetch(`${svc.url}/admin/api/keys/${other.key_id}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    t.ok(revoked.ok, `revoke answered ${revoked.status}`);
    await revoked.arrayBuffer();
    const refused = await fetch(`${svc.url}/v1/usage`, { headers: { 'x-api-key': other.key } });
    t.equal(refused.status, 401, 'the revoked key is refused on its next request');
    await refused.arrayBuffer();

    // the same data directory without the thread: the HTTP thread renders the answer itself, byte for byte the same
    await svc.stop();
    svc = await startService(data, { ...env, SERP_PIPELINE_THREAD: '0' });
    const here = await fetch(`${svc.url}/v1/search/${job_id}?output=json`, { headers });
    t.equal(here.status, 200);
    t.equal(here.headers.get('etag'), firstEtag, 'the same ETag');
    t.ok(Buffer.from(await here.arrayBuffer()).equals(firstBody), 'the same bytes as the thread rendered');

    // an acknowledged submit survives kill -9 with the thread too: the restarted thread's dispatcher finds it
    await svc.stop();
    svc = await startService(data, env);
    const accepted = await submit(svc.url, minted.key, { keyword: 'pizza', no_cache: true });
    t.equal(accepted.status, 202);
    const { job_id: crashed } = (await accepted.json()) as { job_id: string };
    await svc.kill();
    svc = await startService(data, env);
    const after = await pollJob(svc.url, minted.key, crashed, 'json');
    t.equal(after.status, 200, 'the job submitted before the crash is crawled after it');
    const afterBody = (await after.json()) as { search_metadata: { status: string } };
    t.equal(afterBody.search_metadata.status, 'done');
  },
);
