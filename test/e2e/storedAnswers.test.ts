import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { pollJob, startService, startStack, submit } from '../support/service.js';

/**
 * Finished results are stored bytes (docs/api.md#outputs): an ETag, 304 on revalidation, gzip and brotli when asked.
 */
t.test('a finished result: ETag, 304, compressed forms', { skip: fixturesMissing() }, async (t) => {
  const { svc, mintKey, data, google } = await startStack(t);
  const { key } = await mintKey(['--tier', 'pro']);
  const { job_id } = (await (await submit(svc.url, key, { keyword: 'stored bytes' })).json()) as { job_id: string };
  const done = await pollJob(svc.url, key, job_id, 'json');
  const body = await done.text();
  const url = `${svc.url}/v1/search/${job_id}?output=json`;
  const headers = { 'x-api-key': key };

  // undici's fetch decompresses and sends its own Accept-Encoding: ask for identity to see the plain answer
  const plain = await fetch(url, { headers: { ...headers, 'accept-encoding': 'identity' } });
  const etag = plain.headers.get('etag');
  t.match(etag, /^"[A-Za-z0-9_-]{27}"$/, 'a strong ETag');
  t.equal(plain.headers.get('cache-control'), 'private, no-cache');
  t.equal(plain.headers.get('content-encoding'), null);
  t.equal(await plain.text(), body, 'the same bytes on every fetch');

  const again = await fetch(url, { headers: { ...headers, 'if-none-match': etag! } });
  t.equal(again.status, 304, 'a poll that has the result gets 304');
  t.equal(await again.text(), '');
  const other = await fetch(url, { headers: { ...headers, 'if-none-match': '"stale"' } });
  t.equal(other.status, 200);
  await other.arrayBuffer();

  const raw = async (encoding: string) => {
    const { request } = await import('node:http');
    return new Promise<{ enc?: string; bytes: Buffer }>((resolve, reject) => {
      const req = request(url, { headers: { ...headers, 'accept-encoding': encoding } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ enc: res.headers['content-encoding'], bytes: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    });
  };
  const br = await raw('gzip, deflate, br');
  t.equal(br.enc, 'br');
  t.equal(brotliDecompressSync(br.bytes).toString(), body, 'brotli decodes to the same result');
  t.ok(br.bytes.length < body.length * 0.8, `brotli: ${body.length} → ${br.bytes.length} bytes`);
  // the first gzip form is compressed off the event loop: requests that arrive meanwhile wait for the same bytes
  const gzs = await Promise.all(Array.from({ length: 8 }, () => raw('gzip')));
  for (const gz of gzs) {
    t.equal(gz.enc, 'gzip');
    t.ok(gz.bytes.equals(gzs[0]!.bytes), 'one compression, shared');
  }
  t.equal(gunzipSync(gzs[0]!.bytes).toString(), body, 'gzip decodes to the same result');
  const refused = await raw('br;q=0, gzip;q=0');
  t.equal(refused.enc, undefined, 'q=0 refuses an encoding');
  t.equal(refused.bytes.toString(), body);

  // a start slice and the compat form are their own stored answers
  const slice = await fetch(`${url}&start=10`, { headers });
  t.not(slice.headers.get('etag'), etag);
  t.equal(((await slice.json()) as { organic_results: Array<{ position: number }> }).organic_results[0]?.position, 11);
  const compat = await fetch(`${svc.url}/v1/search/${job_id}?output=compat`, { headers });
  t.match(await compat.json(), { search_metadata: { id: job_id, status: 'Success' } });

  // a cache hit is a job of its own: its own metadata, its own ETag
  const hit = (await (await submit(svc.url, key, { keyword: 'stored bytes' })).json()) as { job_id: string };
  const hitRes = await fetch(`${svc.url}/v1/search/${hit.job_id}?output=json`, { headers });
  t.not(hitRes.headers.get('etag'), etag);
  t.match(await hitRes.json(), { search_metadata: { id: hit.job_id, cached: true } });

  // another key never sees it, stored or not
  const { key: stranger } = await mintKey(['--tier', 'free']);
  const theirs = await fetch(url, { headers: { 'x-api-key': stranger, 'if-none-match': etag! } });
  t.equal(theirs.status, 404, 'ownership is checked before the stored answer');
  await theirs.arrayBuffer();

  // the first answer was written from the text the crawl made for the result (knownJson.ts); a restarted service
  // renders it from the read model's document: the same bytes, so the same ETag
  await svc.stop();
  const restarted = await startService(data, { SERP_GOOGLE_ORIGIN: google.origin });
  t.teardown(() => restarted.stop());
  const after = await fetch(`${restarted.url}/v1/search/${job_id}?output=json`, {
    headers: { ...headers, 'accept-encoding': 'identity' },
  });
  t.equal(await after.text(), body, 'rendered again after a restart: the same bytes');
  t.equal(after.headers.get('etag'), etag, 'and the same ETag');
});

/** The compat archive (`/searches/{id}.json`) sends a finished search from stored bytes too, as /v1 does. */
t.test(
  'a stored search by id on the compat surface: the same bytes, ETag, 304, brotli',
  { skip: fixturesMissing() },
  async (t) => {
    const { svc, mintKey } = await startStack(t);
    const { key } = await mintKey(['--tier', 'pro']);
    const { job_id } = (await (await submit(svc.url, key, { keyword: 'archive bytes' })).json()) as { job_id: string };
    await (await pollJob(svc.url, key, job_id, 'json')).arrayBuffer();
    const url = `${svc.url}/searches/${job_id}.json?api_key=${key}`;
    const identity = { 'accept-encoding': 'identity' };
    // the answer's raw-HTML link is signed anew each minute (docs/api.md#outputs), so its bytes change at a minute's
    // turn by design: compare within one minute, starting with at least 20 s of it left
    const leftOfMinute = 60_000 - (Date.now() % 60_000);
    if (leftOfMinute < 20_000) await new Promise((r) => setTimeout(r, leftOfMinute + 50));

    const first = await fetch(url, { headers: identity });
    t.equal(first.status, 200);
    const body = await first.text();
    t.match(JSON.parse(body), { search_metadata: { id: job_id, status: 'Success' }, organic_results: Array });
    const etag = first.headers.get('etag');
    t.match(etag, /^"[A-Za-z0-9_-]{27}"$/, 'a strong ETag');
    const second = await fetch(url, { headers: identity });
    t.equal(second.headers.get('etag'), etag, 'the same ETag');
    t.equal(await second.text(), body, 'the same bytes, sent from the stored answer');

    const revalidated = await fetch(url, { headers: { 'if-none-match': etag! } });
    t.equal(revalidated.status, 304, 'a client that has it gets 304');
    t.equal(await revalidated.text(), '');

    const { request } = await import('node:http');
    const br = await new Promise<{ enc?: string; bytes: Buffer }>((resolve, reject) => {
      const req = request(url, { headers: { 'accept-encoding': 'br' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ enc: res.headers['content-encoding'], bytes: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    });
    t.equal(br.enc, 'br');
    t.equal(brotliDecompressSync(br.bytes).toString(), body, 'brotli decodes to the same search');

    // a page of it is an answer of its own; the /v1 compat output (other links) is not confused with it
    const paged = await fetch(`${url}&start=10&num=10`, { headers: identity });
    t.not(paged.headers.get('etag'), etag);
    const pagedBody = (await paged.json()) as { organic_results: Array<{ position: number }> };
    t.equal(pagedBody.organic_results.length, 10);
    t.equal(pagedBody.organic_results[0]?.position, 11);
    t.equal(await (await fetch(url, { headers: identity })).text(), body, 'the whole search still the same bytes');

    // another key never sees it, stored or not
    const { key: stranger } = await mintKey(['--tier', 'free']);
    const theirs = await fetch(`${svc.url}/searches/${job_id}.json?api_key=${stranger}`, {
      headers: { 'if-none-match': etag! },
    });
    t.equal(theirs.status, 404, 'ownership is checked before the stored answer');
    await theirs.arrayBuffer();
  },
);

t.test('a read says where its time went (Server-Timing)', { skip: fixturesMissing() }, async (t) => {
  const { svc, mintKey } = await startStack(t);
  const { key } = await mintKey(['--tier', 'pro']);
  const headers = { 'x-api-key': key };
  const { job_id } = (await (await submit(svc.url, key, { keyword: 'server timing' })).json()) as { job_id: string };
  await (await pollJob(svc.url, key, job_id, 'html')).arrayBuffer();

  const timing = async (path: string) => {
    const res = await fetch(`${svc.url}${path}`, { headers });
    await res.arrayBuffer();
    t.equal(res.status, 200, path);
    return res.headers.get('server-timing') ?? '';
  };
  const first = await timing(`/v1/search/${job_id}?output=json`);
  t.match(first, /answer;desc=(pipeline|rendered)/, `the first read made the answer: ${first}`);
  t.match(
    first,
    /^key;dur=\d+\.\d, limit;dur=\d+\.\d, /,
    "the key's check and the read ceiling before the handler are timed",
  );
  t.match(first, /job;dur=\d+\.\d/, 'finding the job is timed');
  t.match(first, /total;dur=\d+\.\d, request;dur=\d+\.\d$/, "the handler's whole time, then the request's");
  const second = await timing(`/v1/search/${job_id}?output=json`);
  t.match(second, /answer;desc=stored/, `the next one is sent from the stored bytes: ${second}`);
  t.notMatch(second, /render;dur|pipeline;dur/, 'without rendering it again');
  const usage = await timing('/v1/usage');
  t.match(
    usage,
    /own-writes;dur=\d+\.\d, total;dur=\d+\.\d, request;dur=\d+\.\d$/,
    `usage times its read-your-writes wait: ${usage}`,
  );
});
