import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import { ONE_PAGE } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { startStack } from '../support/service.js';

/**
 * A bounded fuzz run against a listening service: every route, every field with wrong types, huge, empty,
 * unicode and NUL values, path tricks, odd headers and methods, and raw malformed or truncated requests. Zero 5xx,
 * every 4xx a JSON `detail`, the process up, every job it created terminal, its memory back in its starting band.
 * The seed is fixed, so a failure replays; FUZZ_RUNS and FUZZ_SEED change the run.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 3000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);

/** encodeURIComponent throws on a lone surrogate; a client would send U+FFFD */
const enc = (s: string) => {
  try {
    return encodeURIComponent(s);
  } catch {
    return '%EF%BF%BD';
  }
};

type Req = { method: string; path: string; headers: Record<string, string>; body?: string };

const nasty = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom('', ' ', '\u0000', 'a\u0000b', '\uFEFF', '\uD800', '😀'.repeat(50), '../../etc/passwd', '%00', '%ZZ'),
  fc.integer({ min: 1000, max: 12_000 }).map((n) => 'x'.repeat(n)),
  fc.constantFrom('coffee', 'Austin, Texas, United States', 'google.co.uk', 'www.google.de', 'us', 'en', 'mobile'),
);
const anyJson = fc.oneof(
  nasty,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(nasty, { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), nasty, { maxKeys: 3 }),
);
/** values a field could take, good and bad alike */
const plausible = fc.oneof(
  fc.constantFrom('us', 'de', 'en', 'fr', 'mobile', 'tablet', 'desktop', 'nws', 'isch', 'active', 'off', 'dark'),
  fc.constantFrom('Austin, Texas, United States', 'Germany', 'Atlantis', 'google.de', 'www.google.co.uk', 'evil.com'),
  fc.constantFrom(true, false, 0, 1, '0', '1', 10, 100, 101, -1, 1e9, 30.2672, -97.7431, 'qdr:d', 'lang_de'),
);
const FIELDS = [
  'keyword',
  'location',
  'gl',
  'hl',
  'device',
  'stop_domain',
  'capture_aio',
  'uule',
  'lat',
  'lon',
  'radius',
  'engine_domain',
  'tbs',
  'tbm',
  'safe',
  'nfpr',
  'filter',
  'lr',
  'cr',
  'no_cache',
  'async',
  'start',
  'num',
  '__proto__',
  'constructor',
];
const searchBody = fc.oneof(
  // mostly valid with one field wrong: reaches the deepest validation
  fc
    .record({ field: fc.constantFrom(...FIELDS), value: anyJson })
    .map(({ field, value }) => JSON.stringify({ keyword: 'coffee', [field]: value })),
  fc.dictionary(fc.constantFrom(...FIELDS), anyJson, { maxKeys: 6 }).map((d) => JSON.stringify(d)),
  fc.constantFrom('', '{', '[]', 'null', '"x"', '{"keyword":"coffee"', '\u0000', '{"keyword":"a\\u0000b"}'),
  fc.string({ maxLength: 200 }),
);
const jobId = fc.oneof(
  fc.stringMatching(/^[0-9a-f]{24}$/),
  nasty.map(enc),
  fc.constantFrom('..%2F..%2Fadmin', '%2e%2e', '.', '%', 'a/b', '%252F', '\u0000'),
);
const query = fc
  .dictionary(
    fc.constantFrom('output', 'start', 'async', 'api_key', 'q', '_', 'expires', 'signature', 'num', 'engine', 'limit'),
    nasty,
    { maxKeys: 3 },
  )
  .map((d) => {
    const s = new URLSearchParams(d).toString();
    return s ? `?${s}` : '';
  });
const method = fc.constantFrom('GET', 'GET', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD');

const MCP_ACCEPT = 'application/json, text/event-stream';

const request = (key: string, admin: string, mcp: { key: string; session: string }): fc.Arbitrary<Req> => {
  const auth = fc.oneof(
    fc.constant({ 'x-api-key': key }),
    fc.constant({ authorization: `Bearer ${key}` }),
    fc.constant({ authorization: `Bearer ${admin}` }),
    fc.constant({}),
    fc
      .string({ maxLength: 300 })
      .filter((s) => /^[\x20-\x7e]*$/.test(s))
      .map((s) => ({ 'x-api-key': s })),
    fc.constantFrom({ authorization: 'Basic Zm9vOmJhcg==' }, { authorization: 'Bearer' }, { 'x-api-key': ' ' }),
  );
  const contentType = fc.constantFrom(
    'application/json',
    'application/json',
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/json; charset=latin1',
    'multipart/form-data; boundary=x',
  );
  const path = fc.oneof(
    fc.tuple(query).map(([q]) => `/v1/search${q}`),
    fc.tuple(jobId, query).map(([id, q]) => `/v1/search/${id}${q}`),
    fc.tuple(query).map(([q]) => `/v1/usage${q}`),
    fc.tuple(jobId, query).map(([id, q]) => `/raw/${id}${q}`),
    fc.tuple(query).map(([q]) => `/admin/api/keys${q}`),
    fc.tuple(jobId).map(([id]) => `/admin/api/keys/${id}/revoke`),
    fc.tuple(jobId).map(([id]) => `/admin/api/keys/${id}/limits`),
    fc.constantFrom('/health', '/openapi.json', '/llms.txt', '/', '/v1', '/v1/', '//v1/search', '/v1/search/'),
    fc.tuple(query).map(([q]) => `/search.json${q}`),
    fc
      .tuple(jobId, fc.constantFrom('', '.json', '.html', '.xml'), query)
      .map(([id, ext, q]) => `/searches/${id}${ext}${q}`),
    fc.tuple(query).map(([q]) => `/account${q}`),
    fc.tuple(query).map(([q]) => `/locations.json${q}`),
    fc.tuple(query).map(([q]) => `/mcp${q}`),
    nasty.map((s) => `/${enc(s)}`),
  );
  const adminBody = fc
    .dictionary(fc.constantFrom('tier', 'label', 'monthly_quota', 'rate_limit_per_min'), anyJson, { maxKeys: 4 })
    .map((d) => JSON.stringify(d));
  const json = { 'content-type': 'application/json' };
  // requests that reach a route's own validation: the right method, a good key, JSON
  const coherent = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.tuple(searchBody, query).map(([body, q]) => ({
        method: 'POST',
        path: `/v1/search${q}`,
        headers: { 'x-api-key': key, ...json },
        body,
      })),
    },
    {
      weight: 2,
      arbitrary: fc
        .record({ field: fc.constantFrom(...FIELDS), value: plausible, keyword: fc.string({ maxLength: 30 }) })
        .map(({ field, value, keyword }) => ({
          method: 'POST',
          path: '/v1/search',
          headers: { 'x-api-key': key, ...json },
          body: JSON.stringify({ keyword: `fuzz ${keyword}`, [field]: value }),
        })),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(jobId, query).map(([id, q]) => ({
        method: 'GET',
        path: `/v1/search/${id}${q}`,
        headers: { 'x-api-key': key },
      })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(query)
        .map(([q]) => ({ method: 'GET', path: `/v1/usage${q}`, headers: { 'x-api-key': key } })),
    },
    {
      // the compat surface: SerpApi's names in the query, the key as api_key
      weight: 3,
      arbitrary: fc
        .record({
          field: fc.constantFrom(
            'engine',
            'location',
            'gl',
            'hl',
            'device',
            'google_domain',
            'start',
            'num',
            'tbm',
            'safe',
            'nfpr',
            'filter',
            'async',
            'no_cache',
            'output',
            'search_id',
            'uule',
            'as_qdr',
          ),
          value: fc.oneof(plausible.map(String), nasty),
          keyword: fc.oneof(fc.string({ maxLength: 30 }), nasty),
          path: fc.constantFrom('/search', '/search.json'),
        })
        .map(({ field, value, keyword, path }) => {
          const params = new URLSearchParams({ q: `fuzz ${keyword}`, api_key: key });
          params.set(field, value);
          return { method: 'GET', path: `${path}?${params.toString()}`, headers: {} };
        }),
    },
    {
      // the MCP tools in a live session: fuzzed arguments reach the tools' validation and /v1's behind it
      weight: 2,
      arbitrary: fc
        .record({
          tool: fc.constantFrom('serp_search', 'serp_search', 'serp_get_results', 'serp_usage', 'nope'),
          args: fc.dictionary(
            fc.constantFrom(...FIELDS, 'job_id', 'output', 'mode', 'max_wait_seconds', 'start'),
            fc.oneof(anyJson, plausible),
            { maxKeys: 4 },
          ),
          id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 })),
        })
        .map(({ tool, args, id }) => ({
          method: 'POST',
          path: '/mcp',
          headers: { 'x-api-key': mcp.key, 'mcp-session-id': mcp.session, accept: MCP_ACCEPT, ...json },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id,
            method: 'tools/call',
            // never a waiting search: the fuzz would spend its time polling
            params: { name: tool, arguments: { keyword: 'fuzz mcp', ...args, wait: false } },
          }),
        })),
    },
    {
      // MCP messages of every shape, with and without a session, in any protocol version
      weight: 1,
      arbitrary: fc
        .record({
          rpc: fc.constantFrom('initialize', 'tools/list', 'ping', 'resources/list', 'notifications/initialized', 'x'),
          params: anyJson,
          session: fc.constantFrom(undefined, mcp.session, 'nope'),
          version: fc.constantFrom(undefined, '2025-06-18', '2025-03-26', 'x'),
          verb: fc.constantFrom('POST', 'POST', 'GET', 'DELETE'),
        })
        .map(({ rpc, params, session, version, verb }) => ({
          method: verb,
          path: '/mcp',
          headers: {
            'x-api-key': session === mcp.session ? mcp.key : key,
            accept: MCP_ACCEPT,
            ...(verb === 'POST' ? json : {}),
            ...(session ? { 'mcp-session-id': session } : {}),
            ...(version ? { 'mcp-protocol-version': version } : {}),
          },
          ...(verb === 'POST' ? { body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: rpc, params }) } : {}),
        })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom('/admin/api/keys', '/admin/api/keys/k/limits'), adminBody)
        .map(([path, body]) => ({
          method: path.endsWith('limits') ? 'PATCH' : 'POST',
          path,
          headers: { authorization: `Bearer ${admin}`, ...json },
          body,
        })),
    },
  );
  const anything = fc
    .record({
      method,
      path,
      auth,
      contentType,
      body: fc.oneof(searchBody, adminBody),
      extra: fc.constantFrom(
        {},
        { accept: 'text/html' },
        { 'x-forwarded-for': '1.2.3.4' },
        { 'content-encoding': 'gzip' },
        { 'x-big': 'y'.repeat(8000) },
      ),
    })
    .map(({ method, path, auth, contentType, body, extra }) => ({
      method,
      path,
      headers: { ...auth, ...extra, ...(method === 'POST' || method === 'PUT' ? { 'content-type': contentType } : {}) },
      ...(method === 'POST' || method === 'PUT' || method === 'PATCH' ? { body } : {}),
    }));
  return fc.oneof({ weight: 3, arbitrary: coherent }, { weight: 2, arbitrary: anything }) as fc.Arbitrary<Req>;
};

/** Raw bytes on a socket for what fetch cannot send: broken request lines, lying Content-Length, binary garbage. */
const rawRequest = (url: string, bytes: string) =>
  new Promise<string>((resolve) => {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      text += d;
    });
    socket.on('error', () => resolve(text));
    socket.on('close', () => resolve(text));
    socket.write(bytes, 'latin1');
    setTimeout(() => socket.destroy(), 8000).unref();
  });

const rssMb = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
};

t.test('fuzz › a few thousand hostile requests against a running service', { skip: fixturesMissing() }, async (t) => {
  // every search is one Google page that says it is the last (ONE_PAGE): the subject is the HTTP surface, and the
  // hundreds of searches the fuzz starts would otherwise each crawl and parse ten pages
  const { svc, data, mintKey } = await startStack(t, {
    google: ONE_PAGE,
    env: { SERP_REQUEST_TIMEOUT_MS: '2000', SERP_HEADERS_TIMEOUT_MS: '2000', SERP_AUTH_FAILURES_PER_MIN: '1000000' },
  });
  const { key } = await mintKey(['--tier', 'pro', '--quota', '0', '--rate', '1000000']);
  const admin = (JSON.parse(readFileSync(join(data, 'secrets.json'), 'utf8')) as { adminToken: string }).adminToken;
  const pid = svc.child.pid!;

  // warm up (first crawl, JIT, caches) before taking the memory band
  for (let i = 0; i < 20; i++) {
    await fetch(`${svc.url}/v1/search`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ keyword: `warm up ${i}`, depth: 10, async: false }),
    }).then((r) => r.arrayBuffer());
  }

  // one MCP session the fuzz's tool calls run in, on a key of their own (initializes on `key` cannot evict it)
  const { key: mcpKey } = await mintKey(['--tier', 'pro', '--quota', '0', '--rate', '1000000']);
  const mcpHeaders = { 'x-api-key': mcpKey, 'content-type': 'application/json', accept: MCP_ACCEPT };
  const init = await fetch(`${svc.url}/mcp`, {
    method: 'POST',
    headers: mcpHeaders,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
    }),
  });
  const session = init.headers.get('mcp-session-id') ?? '';
  await init.text();
  t.match(session, /^[0-9a-f-]{36}$/, 'an MCP session for the tool calls');
  await fetch(`${svc.url}/mcp`, {
    method: 'POST',
    headers: { ...mcpHeaders, 'mcp-session-id': session },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  }).then((r) => r.arrayBuffer());

  const samples = fc.sample(request(key, admin, { key: mcpKey, session }), { numRuns: RUNS, seed: SEED });
  const problems: string[] = [];
  const jobs = new Set<string>();
  const statuses = new Map<number, number>();
  let next = 0;
  let end = 0;
  const worker = async () => {
    while (next < end) {
      const r = samples[next++];
      let status = 0;
      let text = '';
      let type = '';
      try {
        const res = await fetch(`${svc.url}${r.path}`, {
          method: r.method,
          headers: r.headers,
          body: r.body,
          signal: AbortSignal.timeout(30_000),
        });
        status = res.status;
        type = res.headers.get('content-type') ?? '';
        text = await res.text();
      } catch (err) {
        problems.push(`${r.method} ${r.path.slice(0, 80)}: no answer (${(err as Error).message})`);
        continue;
      }
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      const where = `${r.method} ${r.path.slice(0, 80)} → ${status}`;
      if (status >= 500) problems.push(`${where}: ${text.slice(0, 200)} (body ${r.body?.slice(0, 300)})`);
      if (status >= 400 && status < 500 && r.method !== 'HEAD') {
        let detail: unknown;
        try {
          detail = (JSON.parse(text) as { detail?: unknown }).detail;
        } catch {}
        if (!type.startsWith('application/json') || typeof detail !== 'string' || !detail)
          problems.push(`${where}: no JSON detail (${type}) ${text.slice(0, 120)}`);
        if (text.length > 2000) problems.push(`${where}: a ${text.length}-byte error echoes its input`);
      }
      // a tool's failure is an isError result: it must be the service's detail, never a crash's message
      if (r.path === '/mcp' && /TypeError|ReferenceError|SyntaxError|internal error/.test(text))
        problems.push(`${where}: a tool crashed: ${text.slice(0, 300)}`);
      if (status === 200 || status === 202) {
        const id = /"job_id":"([0-9a-f]{24})"/.exec(text)?.[1];
        if (id && r.path.startsWith('/v1/search') && r.method === 'POST') jobs.add(id);
        const compatId = /"search_metadata":\{"id":"([0-9a-f]{24})"/.exec(text)?.[1];
        if (compatId && r.path.startsWith('/search')) jobs.add(compatId);
      }
    }
  };
  // three thirds: the first two set the memory band a loaded service settles in (its crawl buffers, SQLite's cache),
  // the last must stay in it
  const half = async (upTo: number) => {
    end = upTo;
    await Promise.all(Array.from({ length: 16 }, worker));
    await new Promise((r) => setTimeout(r, 3000));
    return rssMb(pid);
  };
  const rss1 = await half(Math.floor(samples.length / 3));
  const rssStart = Math.max(rss1, await half(Math.floor((2 * samples.length) / 3)));
  const rssEnd = await half(samples.length);

  // raw bytes fetch cannot send
  const raws = [
    'GARBAGE\r\n\r\n',
    'GET / HTTP/9.9\r\nHost: x\r\n\r\n',
    'GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
    'POST /v1/search HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    'POST /v1/search HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n',
    `GET /${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    'GET /health HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0000b\r\n\r\n',
    `POST /v1/search HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"keyw`,
    '\u0000\u0001\u0002\u00ff\r\n\r\n',
  ];
  for (const bytes of raws) {
    const answer = await rawRequest(svc.url, bytes);
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1] ?? 0);
    if (status >= 500) problems.push(`raw ${JSON.stringify(bytes.slice(0, 40))} → ${status}`);
  }

  t.same(problems.slice(0, 20), [], `no 5xx, every 4xx a JSON detail (${problems.length} problems)`);
  t.comment(`statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
  t.equal((await fetch(`${svc.url}/health`)).status, 200, 'the process is up');
  t.equal(svc.child.exitCode, null, 'it never exited');

  // every job the fuzz created reaches an end
  const deadline = Date.now() + 60_000;
  const open = new Set(jobs);
  while (open.size && Date.now() < deadline) {
    for (const id of [...open]) {
      const res = await fetch(`${svc.url}/v1/search/${id}?output=json`, { headers: { 'x-api-key': key } });
      await res.arrayBuffer();
      if (res.status !== 202) open.delete(id);
    }
    if (open.size) await new Promise((r) => setTimeout(r, 250));
  }
  t.equal(open.size, 0, `all ${jobs.size} jobs the fuzz created are terminal`);

  // memory: a leak of a few kB per request would grow the second half's band by tens of MB
  t.comment(
    `rss ${rss1.toFixed(0)} MB after a third, at most ${rssStart.toFixed(0)} after two, ${rssEnd.toFixed(0)} at the end`,
  );
  t.ok(rssEnd < rssStart + 150, `memory stays in its band (${rssStart.toFixed(0)} → ${rssEnd.toFixed(0)} MB)`);
});
