import { connect } from 'node:net';
import { Validator } from '@seriousme/openapi-schema-validator';
import t from 'tap';

import { cli, type RunningService, removeDir, startService, submit, tempDataDir } from '../support/service.js';

type Asserts = { equal: Function; type: Function; match: Function };

/** Origin that refuses connections: no test here needs a crawl to succeed, and none may reach the internet. */
const DEAD_ORIGIN = 'http://127.0.0.1:9';

t.test('bad input, tried as a new user would: always a 4xx with a detail, never a 5xx', async (t) => {
  const data = tempDataDir();
  const svc: RunningService = await startService(data, { SERP_GOOGLE_ORIGIN: DEAD_ORIGIN });
  t.teardown(async () => {
    await svc.stop();
    removeDir(data);
  });
  const mint = async () =>
    JSON.parse(await cli(['keys', 'create', '--tier', 'pro', '--json', '--data', data])).key as string;
  const key = await mint();
  const other = await mint();

  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${svc.url}/v1/search`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers },
      body,
    });
  const expectError = async (t: Asserts, res: Response, status: number, detail: RegExp) => {
    t.equal(res.status, status, `status ${status}`);
    const body = (await res.json()) as { detail?: unknown; code?: unknown };
    t.type(body.detail, 'string', 'has a detail');
    t.match(body.detail, detail);
    t.match(body.code, /^SERP_/);
  };

  const cases: Array<[string, () => Promise<Response>, number, RegExp]> = [
    ['missing keyword', () => post('{}'), 422, /keyword/],
    ['keyword of the wrong type', () => post('{"keyword": 42}'), 422, /keyword/],
    ['empty keyword', () => post('{"keyword": "   "}'), 422, /keyword.*empty/],
    ['100 kB keyword', () => post(JSON.stringify({ keyword: 'a'.repeat(100_000) })), 422, /2048/],
    ['unknown device', () => post('{"keyword":"x","device":"fridge"}'), 422, /device/],
    ['unknown member', () => post('{"keyword":"x","colour":"red"}'), 422, /colour|unrecognized/i],
    ['capture_aio as a string', () => post('{"keyword":"x","capture_aio":"yes"}'), 422, /capture_aio/],
    ['not a Google domain', () => post('{"keyword":"x","engine_domain":"evil.example"}'), 422, /Google/],
    [
      'location and uule together',
      () => post('{"keyword":"x","location":"Austin","uule":"w+abc"}'),
      422,
      /location or uule/,
    ],
    ['lat without lon', () => post('{"keyword":"x","lat":30.2}'), 422, /lat and lon/],
    ['bad JSON', () => post('{"keyword": "x",'), 400, /JSON/],
    ['empty body', () => post(''), 400, /empty|JSON/],
    ['JSON that is not an object', () => post('[1,2,3]'), 422, /.+/],
    ['wrong content type', () => post('keyword=x', { 'content-type': 'text/plain' }), 415, /content type/],
    ['body over 1 MiB', () => post(JSON.stringify({ keyword: 'a'.repeat(1_100_000) })), 413, /too large/],
    [
      'unknown output',
      () =>
        fetch(`${svc.url}/v1/search?output=xml`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: '{"keyword":"x"}',
        }),
      422,
      /output/,
    ],
    ['no key', () => fetch(`${svc.url}/v1/usage`), 401, /missing API key/],
    ['wrong key', () => fetch(`${svc.url}/v1/usage`, { headers: { 'x-api-key': 'sk_nope' } }), 401, /invalid API key/],
    [
      'unknown job id',
      () => fetch(`${svc.url}/v1/search/0123456789abcdef01234567`, { headers: { 'x-api-key': key } }),
      404,
      /job not found/,
    ],
    [
      'malformed job id',
      () => fetch(`${svc.url}/v1/search/../../etc/passwd`, { headers: { 'x-api-key': key } }),
      404,
      /.+/,
    ],
    [
      'negative start',
      () => fetch(`${svc.url}/v1/search/0123456789abcdef01234567?start=-1`, { headers: { 'x-api-key': key } }),
      422,
      /start/,
    ],
    [
      'a job id of 300 characters',
      () => fetch(`${svc.url}/v1/search/${'a'.repeat(300)}`, { headers: { 'x-api-key': key } }),
      404,
      /job not found/,
    ],
    [
      'malformed percent-encoding in the path',
      () => fetch(`${svc.url}/v1/search/%ZZ`, { headers: { 'x-api-key': key } }),
      400,
      /malformed URL/,
    ],
    [
      'a fractional start',
      () => fetch(`${svc.url}/v1/search/0123456789abcdef01234567?start=1.5`, { headers: { 'x-api-key': key } }),
      422,
      /start must be a whole number/,
    ],
    ['nfpr of 2', () => post('{"keyword":"x","nfpr":2}'), 422, /nfpr must be 0 or 1/],
    ['unknown path', () => fetch(`${svc.url}/v2/search`), 404, /no route/],
    ['raw link without signature', () => fetch(`${svc.url}/raw/0123456789abcdef01234567`), 422, /.+/],
  ];
  for (const [name, call, status, detail] of cases) {
    await t.test(name, async (t) => expectError(t, await call(), status, detail));
  }

  await t.test("another key's job is not found", async (t) => {
    const res = await submit(svc.url, key, { keyword: 'mine' });
    const { job_id } = (await res.json()) as { job_id: string };
    await expectError(
      t,
      await fetch(`${svc.url}/v1/search/${job_id}`, { headers: { 'x-api-key': other } }),
      404,
      /job not found/,
    );
  });

  await t.test('a request the HTTP parser refuses gets a JSON 400 with a detail', async (t) => {
    const port = Number(new URL(svc.url).port);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.write('POST /v1/search HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}'),
      );
      let got = '';
      socket.on('data', (d) => {
        got += d.toString();
      });
      socket.on('end', () => resolve(got));
      socket.on('error', reject);
    });
    t.match(raw, /^HTTP\/1\.1 400/);
    const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { detail: string };
    t.match(body.detail, /malformed HTTP request/);
  });

  await t.test('lenient where a client would expect it', async (t) => {
    const ok = await fetch(`${svc.url}/v1/search?output=json&_=1700000000`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ keyword: 'lenient', nfpr: true, filter: '0' }),
    });
    t.equal(ok.status, 202, 'a cache-buster query parameter is ignored; nfpr true and filter "0" are accepted');
    const { job_id } = (await ok.json()) as { job_id: string };
    const fetched = await fetch(`${svc.url}/v1/search/${job_id}?start=&_=1`, { headers: { 'x-api-key': key } });
    t.ok([200, 202].includes(fetched.status), `an empty start= is no offset (${fetched.status})`);
    await fetched.arrayBuffer();
  });

  await t.test('the service still answers after all of it', async (t) => {
    t.equal((await fetch(`${svc.url}/health`)).status, 200);
  });

  await t.test('/openapi.json is a valid OpenAPI 3.1 document describing the native surface', async (t) => {
    const doc = (await (await fetch(`${svc.url}/openapi.json`)).json()) as Record<string, any>;
    t.equal(doc.openapi, '3.1.0');
    const result = await new Validator().validate(doc);
    t.ok(result.valid, `valid: ${JSON.stringify(result.errors ?? '').slice(0, 500)}`);
    t.ok(doc.paths['/v1/search']?.post, 'submit');
    t.ok(doc.paths['/v1/search/{job_id}']?.get, 'fetch');
    t.ok(doc.paths['/v1/usage']?.get, 'usage');
    const fetched = JSON.stringify(doc.paths['/v1/search/{job_id}'].get.responses['200']);
    for (const f of ['organic_results', 'serp_features', 'ai_overview', 'search_metadata', 'html_url'])
      t.match(fetched, f, `the fetch documents ${f}`);
    const body = doc.paths['/v1/search'].post.requestBody.content['application/json'].schema;
    for (const f of [
      'keyword',
      'location',
      'device',
      'capture_aio',
      'uule',
      'engine_domain',
      'tbs',
      'no_cache',
      'color_scheme',
    ]) {
      t.ok(body.properties[f], `documents ${f}`);
    }
  });
});
