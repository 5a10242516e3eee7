import { gunzipSync, gzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import t, { type Test } from 'tap';
import type { SearchRequest } from '../../contracts/search.js';
import { searchJobDecider } from '../../domain/searchJob/searchJob.js';
import { putResult, resultBlobKey } from '../../services/answers/resultBlobs.js';
import { hashKey } from '../../services/application/keys.js';
import type { Core } from '../../services/compose/embedded/core.js';
import { buildTestApp } from '../support/app.js';
import { withinOneMinute } from '../support/clock.js';
import { removeDir, tempDataDir } from '../support/service.js';

/**
 * What the security pass found open, through the HTTP app: tiers named like prototype members, admin sessions that
 * outlived their sign-out or their token, admin credentials nobody throttled, raw-HTML links without limits, and a
 * cache one key could read another key's searches from.
 */

const ADMIN = 'security-test-admin-token-0123456789';

/** A minimal cookie jar over inject: what a browser would send back. */
const jar = () => {
  const cookies = new Map<string, string>();
  return {
    take(setCookie: string | string[] | undefined) {
      for (const line of [setCookie ?? []].flat()) {
        const [pair = '', ...attrs] = line.split(';');
        const [name = '', value = ''] = pair.split('=');
        if (attrs.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a)) || value === '') cookies.delete(name.trim());
        else cookies.set(name.trim(), value);
      }
    },
    header: () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
    get: (name: string) => cookies.get(name),
  };
};

/** Signs in through the form as a browser does (the page's CSRF token, then the form post); returns the jar. */
const signIn = async (t: Test, app: FastifyInstance) => {
  const cookies = jar();
  const page = await app.inject({ url: '/admin' });
  cookies.take(page.headers['set-cookie']);
  const csrf = /name="csrf-token" content="([^"]+)"/.exec(page.body)?.[1] ?? '';
  const res = await app.inject({
    method: 'POST',
    url: '/admin/session',
    headers: { cookie: cookies.header(), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ token: ADMIN, _csrf: csrf }).toString(),
  });
  t.equal(res.statusCode, 303, 'signed in');
  cookies.take(res.headers['set-cookie']);
  return { cookies, csrf };
};

t.test('tiers are looked up by their own names only', async (t) => {
  const { app, core } = await buildTestApp(t, { SERP_ADMIN_TOKEN: ADMIN });
  const auth = { authorization: `Bearer ${ADMIN}` };
  const minted = await app.inject({ method: 'POST', url: '/admin/api/keys', headers: auth, payload: { tier: 'free' } });
  const keyId = minted.json().key_id as string;
  const head = await core.eventStore.headPosition();
  for (const tier of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
    const res = await app.inject({ method: 'POST', url: '/admin/api/keys', headers: auth, payload: { tier } });
    t.equal(res.statusCode, 422, `minting in tier ${tier} is a 422`);
    t.match(res.json(), { code: 'SERP_ADMIN_UNKNOWN_TIER', detail: /unknown tier/ });
  }
  const patched = await app.inject({
    method: 'PATCH',
    url: `/admin/api/keys/${keyId}`,
    headers: auth,
    payload: { tier: 'valueOf' },
  });
  t.equal(patched.statusCode, 422, 'a change to tier valueOf is a 422');
  t.equal(await core.eventStore.headPosition(), head, 'nothing was appended to the log');
  t.equal(core.queries.keys.byId(keyId)?.tier, 'free', 'the key keeps its tier');
});

t.test('admin sessions live on the server', async (t) => {
  const dataDir = tempDataDir('serp-admin-sessions');
  t.teardown(() => removeDir(dataDir));

  await t.test('signing out ends the session: the cookie, replayed, no longer lists or mints keys', async (t) => {
    const { app } = await buildTestApp(t, { SERP_ADMIN_TOKEN: ADMIN }, { dataDir });
    const { cookies, csrf } = await signIn(t, app);
    const copied = cookies.header();
    t.equal((await app.inject({ url: '/admin/api/keys', headers: { cookie: copied } })).statusCode, 200, 'signed in');
    const out = await app.inject({
      method: 'POST',
      url: '/admin/session/end',
      headers: { cookie: copied, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: csrf }).toString(),
    });
    t.equal(out.statusCode, 303, 'signed out');
    const listed = await app.inject({ url: '/admin/api/keys', headers: { cookie: copied } });
    t.equal(listed.statusCode, 401, 'the copied cookie lists nothing');
    const minted = await app.inject({
      method: 'POST',
      url: '/admin/api/keys',
      headers: { cookie: copied, 'x-csrf-token': csrf, 'content-type': 'application/json' },
      payload: { tier: 'free' },
    });
    t.equal(minted.statusCode, 401, 'and mints nothing');
    t.match((await app.inject({ url: '/admin', headers: { cookie: copied } })).body, /Admin token/, 'the sign-in form');
  });

  await t.test('a write by cookie without the page’s token is a 403 the OpenAPI declares', async (t) => {
    const { app } = await buildTestApp(t, { SERP_ADMIN_TOKEN: ADMIN }, { dataDir });
    const { cookies } = await signIn(t, app);
    const minted = await app.inject({
      method: 'POST',
      url: '/admin/api/keys',
      headers: { cookie: cookies.header(), 'content-type': 'application/json' },
      payload: { tier: 'free' },
    });
    t.equal(minted.statusCode, 403, 'refused');
    t.match(minted.json(), { code: 'SERP_ADMIN_CSRF', detail: /reload \/admin/ });
    const paths = (await app.inject({ url: '/openapi.json' })).json().paths;
    for (const [path, method] of [
      ['/admin/api/keys', 'post'],
      ['/admin/api/keys/{key_id}/revoke', 'post'],
      ['/admin/api/keys/{key_id}', 'patch'],
    ]) {
      t.ok(paths[path][method].responses['403'], `${method.toUpperCase()} ${path} documents its 403`);
    }
    t.notOk(paths['/admin/api/keys'].get.responses['403'], 'a read needs no token, and documents none');
  });

  await t.test('a new SERP_ADMIN_TOKEN ends every session', async (t) => {
    const first = await buildTestApp(t, { SERP_ADMIN_TOKEN: ADMIN }, { dataDir });
    const { cookies } = await signIn(t, first.app);
    const cookie = cookies.header();
    t.equal((await first.app.inject({ url: '/admin/api/keys', headers: { cookie } })).statusCode, 200);
    await first.app.close();
    await first.core.close();
    const next = await buildTestApp(t, { SERP_ADMIN_TOKEN: `${ADMIN}-rotated` }, { dataDir });
    t.equal(
      (await next.app.inject({ url: '/admin/api/keys', headers: { cookie } })).statusCode,
      401,
      'the session of the old token is refused',
    );
  });
});

t.test('admin credentials count toward the per-address ceiling', async (t) => {
  const { app } = await buildTestApp(t, { SERP_ADMIN_TOKEN: ADMIN, SERP_AUTH_FAILURES_PER_MIN: '5' });
  const wrong = { authorization: 'Bearer not-the-admin-token-at-all' };
  const codes: number[] = [];
  for (let i = 0; i < 2; i++) codes.push((await app.inject({ url: '/admin/api/keys', headers: wrong })).statusCode);
  for (let i = 0; i < 2; i++) codes.push((await app.inject({ url: '/metrics', headers: wrong })).statusCode);
  const page = await app.inject({ url: '/admin' });
  const csrf = /name="csrf-token" content="([^"]+)"/.exec(page.body)?.[1] ?? '';
  const cookie = [page.headers['set-cookie']].flat()[0]?.split(';')[0] ?? '';
  const form = (token: string) =>
    app.inject({
      method: 'POST',
      url: '/admin/session',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token, _csrf: csrf }).toString(),
    });
  codes.push((await form('wrong-token-0123456789')).statusCode);
  codes.push((await form('wrong-token-0123456789')).statusCode);
  t.same(codes, [401, 401, 401, 401, 401, 429], 'the sixth failure, whichever the route, is one too many');
  const right = { authorization: `Bearer ${ADMIN}` };
  for (const res of [
    await app.inject({ url: '/admin/api/keys', headers: right }),
    await app.inject({ url: '/metrics', headers: right }),
    await form(ADMIN),
  ]) {
    t.equal(res.statusCode, 429, 'refused for the rest of the window, right token or not');
    t.match(res.headers['retry-after'], /^\d+$/, 'with Retry-After');
  }
  const doc = (await app.inject({ url: '/openapi.json' })).json() as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  for (const [path, method] of [
    ['/admin/api/keys', 'get'],
    ['/metrics', 'get'],
    ['/admin/session', 'post'],
    ['/raw/{job_id}', 'get'],
  ] as const) {
    t.ok(doc.paths[path]?.[method]?.responses['429'], `${method.toUpperCase()} ${path} documents its 429`);
  }
});

const request = { keyword: 'coffee', device: 'desktop', capture_aio: true, no_cache: false } as SearchRequest;

/** A job of `keyId`, finished with `raw` as its raw HTML (gzipped when asked, as the crawler stores it). */
/** Ends a started job `done` with the given organic results and raw HTML, and waits until it is projected. */
const completeCrawl = async (
  core: Core,
  jobId: string,
  rawHtmlRef: Awaited<ReturnType<Core['blobStore']['put']>>,
  organic: { position: number; title: string; link: string }[],
  now: string,
) => {
  const resultRef = await putResult(core.blobStore, resultBlobKey(jobId), {
    organic_results: organic,
    serp_features: {},
    information: {},
  });
  const done = await core.handle(`searchJob-${jobId}`, searchJobDecider, {
    type: 'CompleteCrawl',
    jobId,
    status: 'done',
    pages: [],
    resultRef,
    rawHtmlRef,
    parserVersion: '1',
    blocks: 0,
    now,
  });
  await core.projector.waitFor(done.position as number);
};

const finishedJob = async (core: Core, jobId: string, keyId: string, cacheKey: string, raw: string) => {
  const stream = `searchJob-${jobId}`;
  const now = new Date().toISOString();
  const submit = { jobId, keyId, request, cacheKey, month: now.slice(0, 7).replace('-', ''), now };
  await core.handle(stream, searchJobDecider, { type: 'SubmitSearch', ...submit });
  await core.handle(stream, searchJobDecider, { type: 'StartCrawl', jobId, attempt: 1, worker: 'w', now });
  const bytes = Buffer.from(raw);
  const rawHtmlRef = await core.blobStore.putGzipped(`raw/${jobId}.html`, gzipSync(bytes), {
    sha256: 'x'.repeat(64),
    bytes: bytes.length,
  });
  const organic = [{ position: 1, title: 'Coffee', link: 'https://example.com/' }];
  await completeCrawl(core, jobId, rawHtmlRef, organic, now);
};

const keyIdOf = (core: Core, raw: string) =>
  core.queries.keys.byHash(hashKey(raw, core.secrets.keyPepper))?.keyId as string;

/** The signed raw link of a job, as `output=html` hands it out. */
const rawLink = async (app: FastifyInstance, key: string, jobId: string) => {
  const res = await app.inject({ url: `/v1/search/${jobId}`, headers: { 'x-api-key': key } });
  return new URL(res.json().html_url as string).pathname + new URL(res.json().html_url as string).search;
};

t.test('raw-HTML links', async (t) => {
  const { app, core, services, mintKey } = await buildTestApp(t, { SERP_RAW_PER_ADDRESS_PER_MIN: '1000' });
  const key = await mintKey('free');
  const keyId = keyIdOf(core, key);
  const page = '<html><body><a href="https://example.com/">Coffee</a></body></html>';
  const fresh = `<!-- serp-page start=0 url=/search?q=coffee fetched_at=2026-01-01T00:00:00.000Z -->\n${page}`;
  const legacy = `<!-- serp-page start=0 url=http://127.0.0.1:8090/search?q=coffee fetched_at=2026-01-01T00:00:00.000Z -->\n${page}\n<!-- serp-page start=10 url=https://mirror.example:8443/search?q=coffee&start=10 fetched_at=2026-01-01T00:00:00.000Z -->\n${page}`;
  await finishedJob(core, '0123456789ab0123456789a1', keyId, 'c1', fresh);
  await finishedJob(core, '0123456789ab0123456789a2', keyId, 'c2', legacy);
  const link = await rawLink(app, key, '0123456789ab0123456789a1');

  await t.test('the stored gzip goes out as it is, private', async (t) => {
    const res = await app.inject({ url: link, headers: { 'accept-encoding': 'gzip, deflate, br' } });
    t.equal(res.statusCode, 200);
    t.equal(res.headers['content-encoding'], 'gzip');
    t.equal(res.headers['cache-control'], 'private');
    t.equal(res.headers['content-security-policy'], 'sandbox');
    t.equal(gunzipSync(res.rawPayload).toString('utf8'), fresh, 'the raw HTML, byte for byte');
    const plain = await app.inject({ url: link });
    t.equal(plain.headers['content-encoding'], undefined, 'a client that takes no gzip gets the text');
    t.equal(plain.body, fresh);
  });

  await t.test('raw HTML stored with the origin in its markers is sent without it', async (t) => {
    const res = await app.inject({
      url: await rawLink(app, key, '0123456789ab0123456789a2'),
      headers: { 'accept-encoding': 'gzip' },
    });
    t.equal(res.statusCode, 200);
    t.notMatch(res.body, /127\.0\.0\.1|mirror\.example/, 'no origin host');
    t.match(res.body, /<!-- serp-page start=0 url=\/search\?q=coffee fetched_at=/);
    t.match(res.body, /<!-- serp-page start=10 url=\/search\?q=coffee&start=10 fetched_at=/);
  });

  await t.test("each answer counts against the owning key's read ceiling", async (t) => {
    // the read ceiling of a free key: max(600, 10 × 10) a minute, shared by its polls and its links
    const ceiling = 600;
    // the loop (about 2 s) and the poll after it in one of the limiter's minutes
    await withinOneMinute(10_000);
    let served = 0;
    let usedUp = 0;
    for (let i = 0; i < ceiling + 5; i++) {
      const res = await app.inject({ url: link, headers: { 'accept-encoding': 'gzip' } });
      if (res.statusCode === 200) served++;
      else if (res.statusCode === 429) usedUp++;
    }
    t.ok(served <= ceiling && usedUp > 0, `${served} served (with any polls before them), then 429 (${usedUp})`);
    const poll = await app.inject({ url: '/v1/usage', headers: { 'x-api-key': key } });
    t.equal(poll.statusCode, 429, "the key's own reads are over its ceiling too: a link is no way around it");
  });

  await t.test("a revoked key's links stop answering", async (t) => {
    const other = await mintKey('pro');
    const otherId = keyIdOf(core, other);
    await finishedJob(core, '0123456789ab0123456789a3', otherId, 'c3', fresh);
    const otherLink = await rawLink(app, other, '0123456789ab0123456789a3');
    t.equal((await app.inject({ url: otherLink })).statusCode, 200);
    const revoked = await services.keys.revoke(otherId);
    await core.projector.waitFor(revoked.position as number);
    const res = await app.inject({ url: otherLink });
    t.equal(res.statusCode, 403);
    t.match(res.json(), { code: 'SERP_LINK_REVOKED' });
  });
});

t.test('raw-HTML links have a per-address ceiling', async (t) => {
  const { app, core, mintKey } = await buildTestApp(t, { SERP_RAW_PER_ADDRESS_PER_MIN: '3' });
  const key = await mintKey('pro');
  const keyId = keyIdOf(core, key);
  await finishedJob(core, '0123456789ab0123456789b1', keyId, 'c', '<html>x</html>');
  const link = await rawLink(app, key, '0123456789ab0123456789b1');
  const codes = [];
  for (let i = 0; i < 4; i++) codes.push((await app.inject({ url: link })).statusCode);
  t.same(codes, [200, 200, 200, 429]);
  const over = await app.inject({ url: link });
  t.match(over.headers['retry-after'], /^\d+$/);
  t.equal(
    (await app.inject({ url: link, remoteAddress: '127.0.0.9' })).statusCode,
    200,
    'another address has its own count',
  );
});

t.test('the result cache', async (t) => {
  const search = async (app: FastifyInstance, key: string) =>
    (
      await app.inject({
        method: 'POST',
        url: '/v1/search',
        headers: { 'x-api-key': key },
        payload: { keyword: 'coffee' },
      })
    ).json() as { job_id: string; cached: boolean };
  const finish = async (core: Core, jobId: string) => {
    const job = core.queries.jobs.byId(jobId);
    const stream = `searchJob-${jobId}`;
    const now = new Date().toISOString();
    await core.handle(stream, searchJobDecider, { type: 'StartCrawl', jobId, attempt: 1, worker: 'w', now });
    const rawHtmlRef = await core.blobStore.put(`raw/${jobId}.html`, '<html>coffee</html>');
    await completeCrawl(core, jobId, rawHtmlRef, [], now);
    t.ok(job, 'the job was submitted');
  };

  await t.test('is per key by default: another key searching the same gets a crawl of its own', async (t) => {
    const { app, core, mintKey } = await buildTestApp(t);
    const [a, b] = [await mintKey('pro'), await mintKey('pro')];
    const first = await search(app, a);
    await finish(core, first.job_id);
    t.equal((await search(app, b)).cached, false, "B is not answered from A's search");
    t.equal((await search(app, a)).cached, true, 'A is, from its own');
  });

  await t.test('SERP_CACHE_SCOPE=shared: any key is answered from any key’s search', async (t) => {
    const { app, core, mintKey } = await buildTestApp(t, { SERP_CACHE_SCOPE: 'shared' });
    const [a, b] = [await mintKey('pro'), await mintKey('pro')];
    const first = await search(app, a);
    await finish(core, first.job_id);
    t.equal((await search(app, b)).cached, true, "B is answered from A's search");
  });
});
