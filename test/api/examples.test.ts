import t from 'tap';
import { instantProblem } from '../../contracts/isoInstant.js';
import type { Resolver } from '../../services/webhooks/commands/webhookSafety.js';
import { buildTestApp } from '../support/app.js';
import {
  createOpenApiValidator,
  escapePointer,
  type OpenApiDoc,
  type OpenApiValidator,
  responsePointer,
} from '../support/openapiValidator.js';

/**
 * Every example the live /openapi.json documents is sent to a listening server and answers with the status it is
 * documented under, in a body its schema allows (docs/api.md#examples):
 * - an operation's request examples (its body examples, its parameters' examples) are its success: its one 2xx;
 * - an example under any other status carries `x-request`, what to change in that success request to get it;
 * - each case starts with a fresh key that holds one of each resource the examples name (created with the first
 *   example of its create operation); the example ids of those resources are replaced by the real ones;
 * - instants in requests are written as of EXAMPLE_NOW and moved by the time since then (a replay's `since` must be
 *   recent), so the examples stay true as the calendar moves.
 */

/** the examples' clock: their timestamps are of the morning of 2 March 2026 */
const EXAMPLE_NOW = Date.parse('2026-03-02T10:00:00Z');

/** an id the examples show → the operation that creates such a resource, and the field of its answer with the id */
const PLACEHOLDERS: Record<string, { create: string; field: string }> = {
  mon_3f9a1c2b7d4e5f60718293a4: { create: '/v1/monitors', field: 'monitor_id' },
  wh_5d1c9e0a7b3f42e6a8c01d2e: { create: '/v1/webhooks', field: 'webhook_id' },
  // a search this app never crawls (it runs no crawler): it stays queued, so its screenshot is the 409 example
  '0195a3c4b5d6a1b2c3d4e5f6': { create: '/v1/search', field: 'job_id' },
};

/** statuses whose examples are not sent, and why (each is probed on every route by test/api/contract.test.ts) */
const NOT_SENT: Record<string, string> = {
  '413': 'a body over 1 MiB does not belong in a document',
  '429': "needs a key's or an address's ceiling spent first, with a minute's wait after",
  '503': 'needs the event store or queue of a distributed deployment to be unreachable',
};

/** operations with more than one 2xx: the one their request examples answer, and why that one */
const SUCCESS_OF: Record<string, string> = {
  'POST /v1/search': '202', // async (the default) answers 202 at once; 200 only with async: false and a quick search
};

/** operations whose success is not sent, and why */
const SUCCESS_NOT_SENT: Record<string, string> = {
  'GET /v1/search/{job_id}/screenshot':
    'needs a finished search, which this app (no crawler) never has: test/e2e/screenshots.test.ts renders one in Chromium',
  'POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry':
    'a delivery exists only once the webhook worker has routed an event, which this app does not run (test/e2e/webhooks.test.ts retries one)',
};

/** why an operation documents no example */
const META = 'keyless documents: what they answer is the document itself, checked by test/api/contract.test.ts';
const RAW = 'a signed link made for a finished job: its answers are checked by test/api/contract.test.ts';
const NATIVE = 'no example documented yet: its answers are checked by test/api/contract.test.ts';
const COMPAT = "SerpApi's parameters and envelope: SerpApi's own documentation is their reference (docs/compat.md)";
const MCP = "JSON-RPC of the MCP specification: the tools' schemas are in tools/list (docs/mcp.md)";
const ADMIN = "the dashboard's own API behind the admin token, not a client's (docs/operations.md#admin-dashboard)";

/** operations that document no example at all, and why: nothing to send */
const NO_EXAMPLES: Record<string, string> = {
  'GET /': META,
  'GET /health': META,
  'GET /openapi.json': META,
  'GET /llms.txt': META,
  'GET /metrics': META,
  'GET /raw/{job_id}': RAW,
  'GET /v1/search/{job_id}': NATIVE,
  'GET /v1/usage': NATIVE,
  'GET /search': COMPAT,
  'GET /search.json': COMPAT,
  'GET /searches/{search_id}': COMPAT,
  'GET /account': COMPAT,
  'GET /account.json': COMPAT,
  'GET /locations.json': COMPAT,
  'POST /mcp': MCP,
  'GET /mcp': MCP,
  'DELETE /mcp': MCP,
  'GET /admin': ADMIN,
  'POST /admin/session': ADMIN,
  'POST /admin/session/end': ADMIN,
  'GET /admin/assets/{name}': ADMIN,
  'GET /admin/api/keys': ADMIN,
  'POST /admin/api/keys': ADMIN,
  'POST /admin/api/keys/{key_id}/revoke': ADMIN,
  'PATCH /admin/api/keys/{key_id}': ADMIN,
  'GET /admin/api/tiers': ADMIN,
  'GET /admin/api/keys/{key_id}/usage': ADMIN,
  'GET /admin/api/keys/{key_id}/jobs': ADMIN,
  'GET /admin/api/service': ADMIN,
  'GET /admin/api/keys/{key_id}/monitors': ADMIN,
  'GET /admin/api/monitors/{monitor_id}/positions': ADMIN,
  'GET /admin/api/monitors/{monitor_id}/summary': ADMIN,
  'GET /admin/api/jobs/{job_id}/screenshot': ADMIN,
  'GET /admin/api/jobs/{job_id}/positions': ADMIN,
};

/** what to change in the success request (services/api/routes/v1/errorExamples.ts) */
interface ExampleRequest {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string | null>;
  tier?: string;
  repeat?: number;
}
interface Example {
  value?: unknown;
  'x-request'?: ExampleRequest;
}
interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  example?: unknown;
  examples?: Record<string, Example>;
}
interface Media {
  schema?: unknown;
  example?: unknown;
  examples?: Record<string, Example>;
}
interface Op {
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}

/** one request to send, and the status it is documented to answer */
interface Case {
  op: string;
  name: string;
  status: string;
  params: Record<string, string>;
  query: Record<string, string>;
  body?: unknown;
  rawBody?: string;
  headers: Record<string, string | null>;
  tier: string;
  repeat: number;
  /** the documented answer's `code` (error examples) */
  code?: string;
  detail?: string;
}

const examplesOf = (m: Media | undefined): Array<[string, Example]> =>
  m?.examples ? Object.entries(m.examples) : m && 'example' in m ? [['example', { value: m.example }]] : [];

/** every value of `value` with each string `swap` maps replaced */
const mapStrings = (value: unknown, swap: (s: string) => string): unknown =>
  typeof value === 'string'
    ? swap(value)
    : Array.isArray(value)
      ? value.map((v) => mapStrings(v, swap))
      : value && typeof value === 'object'
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, swap)]))
        : value;

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
/** an instant of the examples' clock moved by `shiftMs` (a date stays a date); anything else as written */
const moveInstant = (shiftMs: number) => (s: string) => {
  if (!/^\d{4}-\d{2}-\d{2}/.test(s) || instantProblem(s) !== undefined) return s;
  const moved = new Date(Date.parse(s) + shiftMs).toISOString();
  return DATE_ONLY.test(s) ? moved.slice(0, 10) : moved;
};

/** the cases of one operation, and what could not be made a case */
const casesOf = (op: string, o: Op): { cases: Case[]; problems: string[] } => {
  const problems: string[] = [];
  const success = SUCCESS_OF[op] ? [SUCCESS_OF[op]] : Object.keys(o.responses).filter((s) => /^2\d\d$/.test(s));
  const params: Record<string, string> = {};
  const query: Record<string, string> = {};
  for (const p of o.parameters ?? []) {
    const example = p.example ?? Object.values(p.examples ?? {})[0]?.value;
    if (example !== undefined) (p.in === 'path' ? params : query)[p.name] = String(example);
    else if (p.in === 'path') problems.push(`${op}: path parameter ${p.name} has no example`);
  }
  const bodies = examplesOf(o.requestBody?.content?.['application/json']);
  if (o.requestBody?.required && bodies.length === 0) problems.push(`${op}: a required body without an example`);
  const base = { op, params, query, headers: {}, tier: 'pro', repeat: 1 };
  const first = bodies[0]?.[1].value;
  const cases: Case[] = [];
  if (success.length !== 1) problems.push(`${op}: ${success.length} success statuses (${success})`);
  else if (!SUCCESS_NOT_SENT[op]) {
    const [status] = success as [string];
    if (bodies.length === 0) cases.push({ ...base, name: `${status} (its parameters' examples)`, status });
    for (const [name, ex] of bodies) cases.push({ ...base, name: `${status} body ${name}`, status, body: ex.value });
  }
  for (const [status, response] of Object.entries(o.responses)) {
    if (/^2\d\d$/.test(status)) continue;
    for (const [media, content] of Object.entries(response.content ?? {})) {
      for (const [name, ex] of examplesOf(content)) {
        const req = ex['x-request'];
        if (!req) {
          if (!NOT_SENT[status]) problems.push(`${op} ${status} ${media} example ${name} has no x-request`);
          continue;
        }
        cases.push({
          ...base,
          name: `${status} ${name}`,
          status,
          params: { ...params, ...req.params },
          query: { ...query, ...req.query },
          body: 'body' in req ? req.body : first,
          ...(req.rawBody !== undefined ? { rawBody: req.rawBody } : {}),
          headers: req.headers ?? {},
          tier: req.tier ?? 'pro',
          repeat: req.repeat ?? 1,
          code: (ex.value as { code?: string } | undefined)?.code,
          detail: (ex.value as { detail?: string } | undefined)?.detail,
        });
      }
    }
  }
  return { cases, problems };
};

/** the documented examples (requests' and answers') that their own schema refuses */
const invalidExamples = (openapi: OpenApiValidator, path: string, method: string, o: Op): string[] => {
  const out: string[] = [];
  const at = `#/paths/${escapePointer(path)}/${method}`;
  for (const [media, content] of Object.entries(o.requestBody?.content ?? {})) {
    for (const [name, ex] of examplesOf(content)) {
      for (const e of openapi.validate(`${at}/requestBody/content/${escapePointer(media)}/schema`, ex.value)) {
        out.push(`${method.toUpperCase()} ${path} request ${name}: ${e}`);
      }
    }
  }
  for (const [status, response] of Object.entries(o.responses)) {
    for (const [media, content] of Object.entries(response.content ?? {})) {
      for (const [name, ex] of examplesOf(content)) {
        for (const e of openapi.validate(responsePointer(path, method, status, media), ex.value)) {
          out.push(`${method.toUpperCase()} ${path} ${status} ${name}: ${e}`);
        }
      }
    }
  }
  return out;
};

/**
 * A documented detail as a pattern of the answer's: what varies from one request to the next is written in the
 * example as an id of the examples (`run_…`, `mon_…`), an instant, or `…`.
 */
const detailPattern = (detail: string) =>
  new RegExp(
    `^${detail
      .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      .replace(/\b(run|mon|wh|dlv|rpl)_[0-9a-z]+/g, '$1_[0-9a-z]+')
      .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\\\.\d{3}Z/g, '\\d{4}-\\d{2}-\\d{2}T[\\d:.]+Z')
      .replaceAll('…', '.*?')}$`,
  );

const resolve: Resolver = async (host) => {
  const known: Record<string, string> = { 'example.com': '93.184.216.34', 'hooks.internal': '10.0.0.7' };
  const address = known[host];
  if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return [{ address, family: 4 }];
};

t.test('every documented example answers with its documented status', async (t) => {
  const started = Date.now();
  // every 401 example is a request without a key from this one address: the per-address ceiling on those must not
  // turn the later ones into 429s as examples are added
  const { app, mintKey } = await buildTestApp(t, { SERP_AUTH_FAILURES_PER_MIN: '10000' }, { resolve });
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const doc = (await (await fetch(`${base}/openapi.json`)).json()) as OpenApiDoc;
  const openapi = createOpenApiValidator(doc);
  const shift = moveInstant(Date.now() - EXAMPLE_NOW);

  const all: Array<{ path: string; method: string; op: string; o: Op }> = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, o] of Object.entries(ops)) {
      all.push({ path, method, op: `${method.toUpperCase()} ${path}`, o: o as unknown as Op });
    }
  }
  const cases: Case[] = [];
  const problems: string[] = [];
  const documented = new Set<string>();
  for (const { op, o } of all) {
    const hasExamples =
      (o.parameters ?? []).some((p) => p.example !== undefined || p.examples) ||
      examplesOf(o.requestBody?.content?.['application/json']).length > 0 ||
      Object.values(o.responses).some((r) => Object.values(r.content ?? {}).some((m) => examplesOf(m).length > 0));
    if (!hasExamples) continue;
    documented.add(op);
    const found = casesOf(op, o);
    cases.push(...found.cases);
    problems.push(...found.problems);
  }

  t.test('each route is replayed, or listed as documenting no example', async (t) => {
    const missing = all.map((a) => a.op).filter((op) => !documented.has(op));
    t.same(missing.sort(), Object.keys(NO_EXAMPLES).sort(), `${documented.size} operations document examples`);
    t.same(problems, [], 'every example can be sent: it names its status and what to send');
  });

  t.test('each example is allowed by the schema it illustrates', async (t) => {
    t.same(
      all.flatMap(({ path, method, o }) => invalidExamples(openapi, path, method, o)),
      [],
    );
  });

  /** a fresh key of `tier` with one of each placeholder resource: example id → real id */
  const freshKey = async (tier: string) => {
    const key = await mintKey(tier);
    const ids = new Map<string, string>();
    for (const [id, { create, field }] of Object.entries(PLACEHOLDERS)) {
      const body = examplesOf(
        (doc.paths[create]?.post as unknown as Op | undefined)?.requestBody?.content?.['application/json'],
      )[0]?.[1].value;
      const res = await fetch(`${base}${create}`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(mapStrings(body, (s) => ids.get(s) ?? s)),
      });
      const answer = (await res.json()) as Record<string, string>;
      // a search is accepted (202), every other resource created (201)
      if (res.status !== (create === '/v1/search' ? 202 : 201))
        throw new Error(`creating ${create}'s first example answered ${res.status}: ${answer.detail}`);
      ids.set(id, answer[field]!);
    }
    return { key, ids };
  };

  const send = async (c: Case) => {
    const { key, ids } = await freshKey(c.tier);
    const real = (s: string) => ids.get(s) ?? shift(s);
    const [method, route] = c.op.split(' ') as [string, string];
    const path = route.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(real(c.params[name] ?? '')));
    const query = new URLSearchParams(Object.entries(c.query).map(([k, v]) => [k, real(v)])).toString();
    const hasBody = c.rawBody !== undefined || c.body !== undefined;
    const headers: Record<string, string> = {
      'x-api-key': key,
      ...(hasBody ? { 'content-type': 'application/json' } : {}),
    };
    for (const [k, v] of Object.entries(c.headers)) {
      if (v === null) delete headers[k];
      else headers[k] = v;
    }
    const body = c.rawBody ?? (c.body === undefined ? undefined : JSON.stringify(mapStrings(c.body, real)));
    let res: Response | undefined;
    for (let i = 0; i < c.repeat; i++) {
      res = await fetch(`${base}${path}${query ? `?${query}` : ''}`, { method, headers, body });
      if (i < c.repeat - 1) await res.arrayBuffer();
    }
    return { res: res!, route, method: method.toLowerCase() };
  };

  t.test('each request example answers as documented', async (t) => {
    t.ok(cases.length > 100, `${cases.length} examples to send`);
    for (const c of cases) {
      const { res, route, method } = await send(c);
      const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
      const text = await res.text();
      const label = `${c.op} ${c.name}`;
      if (String(res.status) !== c.status) {
        t.fail(`${label}: answered ${res.status}, documented ${c.status}: ${text.slice(0, 300)}`);
        continue;
      }
      if (res.status === 204 || text === '') {
        t.pass(`${label}: ${res.status}`);
        continue;
      }
      const value = type === 'application/json' ? (JSON.parse(text) as { code?: string }) : text;
      const errors = openapi.validate(responsePointer(route, method, c.status, type), value);
      t.same(errors, [], `${label}: ${res.status}, a body its schema allows`);
      if (c.code) t.equal((value as { code?: string }).code, c.code, `${label}: code ${c.code}`);
      if (c.detail) t.match((value as { detail?: string }).detail, detailPattern(c.detail), `${label}: its detail`);
    }
    t.comment(`${cases.length} examples sent in ${Date.now() - started} ms`);
  });
});
