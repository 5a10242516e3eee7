import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Webhook } from 'standardwebhooks';
import t from 'tap';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../contracts/webhookEvents.js';
import { WEBHOOK_EVENTS } from '../../services/webhooks/workers/eventTypes.js';
import { fixturesMissing } from '../support/fixtures.js';
import { pollJob, startStack, submit } from '../support/service.js';
import { type Received, startReceiver, WEBHOOK_ENV } from '../support/webhookReceiver.js';

/**
 * Webhooks end to end (docs/webhooks.md), through a listening port: `serp-api serve` against the fake Google, and a
 * receiver on 127.0.0.1 that verifies every delivery with the `standardwebhooks` library and nothing else. Searches of
 * every surface (native, SerpApi-compatible, MCP), a blocked search, monitor runs and their alerts, a key crossing
 * its quota lines; receivers that fail (retried with backoff, same webhook-id), answer 410 (disabled), redirect (not
 * followed) or hang (timeout).
 */
const missing = fixturesMissing();

const api = (base: string, key: string) => async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}/v1${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, text };
};

const ofType = (all: Received[], path: string, type: string) =>
  all.filter((r) => r.path === path && r.payload?.type === type);

t.test('webhooks through a listening port', { skip: missing }, async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const stack = await startStack(t, { google: { rotate: true }, env: WEBHOOK_ENV });
  const { adminToken } = JSON.parse(readFileSync(join(stack.data, 'secrets.json'), 'utf8')) as { adminToken: string };
  const base = stack.svc.url;
  const { key } = await stack.mintKey(['--tier', 'pro']);
  const call = api(base, key);

  const register = async (path: string, events: string[], k = key) => {
    const res = await api(base, k)('POST', '/webhooks', { url: `${receiver.origin}${path}`, events });
    t.equal(res.status, 201, `${path} registered: ${res.text.slice(0, 200)}`);
    t.match(res.json.secret, /^whsec_/);
    receiver.setSecrets(path, [res.json.secret]);
    return res.json as { webhook_id: string; secret: string };
  };

  const tries = new Map<string, number>();
  receiver.setAnswer((r) => {
    const id = String(r.headers['webhook-id']);
    const n = (tries.get(`${r.path} ${id}`) ?? 0) + 1;
    tries.set(`${r.path} ${id}`, n);
    if (r.path === '/flaky') return { status: n <= 2 ? 503 : 200 };
    if (r.path === '/gone') return { status: 410 };
    if (r.path === '/redirect') return { status: 302, headers: { location: `${receiver.origin}/redirected` } };
    if (r.path === '/slow') return n === 1 ? 'hang' : { status: 200 };
    return { status: 204 };
  });

  const all = await register('/all', [...WEBHOOK_EVENT_TYPES]);
  const flaky = await register('/flaky', ['search.completed']);
  const gone = await register('/gone', ['search.completed']);
  const redirect = await register('/redirect', ['search.completed']);
  const slow = await register('/slow', ['search.completed']);

  await t.test('refused registrations change nothing, and send nothing', async (t) => {
    const before = receiver.received.length;
    const bad = [
      { url: 'not a url', events: ['search.completed'] },
      { url: `${receiver.origin}/x`, events: ['search.done'] },
      { url: `${receiver.origin}/${'x'.repeat(2001)}`, events: ['search.completed'] },
    ];
    for (const body of bad) {
      const res = await call('POST', '/webhooks', body);
      t.equal(res.status, 422, `${JSON.stringify(body).slice(0, 60)}: 422`);
      t.type(res.json.detail, 'string');
    }
    t.equal((await call('GET', '/webhooks')).json.webhooks.length, 5, 'still five endpoints');
    t.equal(receiver.received.length, before, 'no request reached the receiver');
  });

  const started = Date.now();
  // every surface's search: native, SerpApi-compatible (synchronous), MCP
  const native = (await (await submit(base, key, { keyword: 'webhook native' })).json()) as { job_id: string };
  const compat = (await (
    await fetch(`${base}/search.json?engine=google&q=${encodeURIComponent('webhook compat')}&api_key=${key}`)
  ).json()) as { search_metadata: { id: string } };
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { 'x-api-key': key } },
  });
  const mcp = new Client({ name: 'webhook-test', version: '1.0.0' });
  await mcp.connect(transport);
  t.teardown(() => mcp.close());
  const viaMcp = (await mcp.callTool({ name: 'serp_search', arguments: { keyword: 'webhook mcp' } }, undefined, {
    timeout: 120_000,
  })) as { structuredContent?: { job_id?: string; search_metadata?: { id: string } } };
  const mcpJob = viaMcp.structuredContent?.job_id ?? viaMcp.structuredContent?.search_metadata?.id;
  t.ok(mcpJob, 'the MCP search has a job id');
  const jobs = [native.job_id, compat.search_metadata.id, mcpJob as string];
  t.equal((await pollJob(base, key, native.job_id)).status, 200);

  await t.test('search.completed for every surface, verified by standardwebhooks', async (t) => {
    await receiver.waitFor(
      (r) => jobs.every((j) => ofType(r, '/all', 'search.completed').some((x) => x.payload?.data.job_id === j)),
      'search.completed of three jobs',
    );
    const firstAt = Math.min(...ofType(receiver.received, '/all', 'search.completed').map((r) => r.at));
    t.ok(firstAt - started < 60_000, 'arrived while the test waited');
    for (const r of receiver.received.filter((x) => x.path === '/all')) {
      t.notOk(r.error, `verified (${r.error ?? r.payload?.type})`);
    }
    const one = ofType(receiver.received, '/all', 'search.completed').find(
      (x) => x.payload?.data.job_id === native.job_id,
    ) as Received;
    t.match(one.headers, { 'webhook-id': /^msg_/, 'webhook-timestamp': /^\d+$/, 'webhook-signature': /^v1,/ });
    t.match(one.payload?.data, {
      job_id: native.job_id,
      status: 'done',
      keyword: 'webhook native',
      top_results: Array,
      json_endpoint: new RegExp(`/v1/search/${native.job_id}`),
    });
    t.ok(
      ((one.payload?.data.top_results ?? []) as unknown[]).length <= 3,
      'at most three results, never the whole result',
    );
    t.ok(one.body.length < 4000, `the body is small (${one.body.length} bytes)`);
  });

  await t.test('a failing receiver gets the same webhook-id again, with growing delays', async (t) => {
    await receiver.waitFor((r) => r.filter((x) => x.path === '/flaky').length >= 3 * jobs.length, 'flaky retries');
    const byId = new Map<string, Received[]>();
    for (const r of receiver.received.filter((x) => x.path === '/flaky')) {
      const id = String(r.headers['webhook-id']);
      byId.set(id, [...(byId.get(id) ?? []), r]);
    }
    t.equal(byId.size, jobs.length, 'one webhook-id per search');
    for (const [id, list] of byId) {
      t.ok(list.length >= 3, `${id}: two failures then a success`);
      t.ok(
        list.every((r) => !r.error),
        'every attempt verifies',
      );
      t.ok(list[1]!.at - list[0]!.at >= 100, `the first retry waited (${list[1]!.at - list[0]!.at} ms)`);
    }
    const deliveries = await call('GET', `/webhooks/${flaky.webhook_id}/deliveries`);
    t.equal(deliveries.status, 200);
    const list = deliveries.json.deliveries as Array<{ status: string; attempts: Array<{ status_code: number }> }>;
    t.equal(list.length, jobs.length);
    for (const d of list) {
      t.same(
        d.attempts.slice(0, 2).map((a) => a.status_code),
        [503, 503],
        'the failed attempts are listed with their status code',
      );
    }
  });

  await t.test('410 disables the endpoint', async (t) => {
    await receiver.waitFor((r) => r.some((x) => x.path === '/gone'), 'a delivery to /gone');
    let view = (await call('GET', `/webhooks/${gone.webhook_id}`)).json;
    for (let i = 0; i < 100 && !view.disabled; i++) {
      await new Promise((r) => setTimeout(r, 100));
      view = (await call('GET', `/webhooks/${gone.webhook_id}`)).json;
    }
    t.match(view, { disabled: true, disabled_reason: 'endpoint_gone' });
  });

  await t.test('a redirect is not followed, and is retried', async (t) => {
    await receiver.waitFor(
      (r) => r.filter((x) => x.path === '/redirect').length >= 2,
      'two attempts at /redirect',
      30_000,
    );
    t.equal(receiver.received.filter((x) => x.path === '/redirected').length, 0, 'nothing reached the target');
    const d = (await call('GET', `/webhooks/${redirect.webhook_id}/deliveries`)).json.deliveries;
    t.ok(
      d.some((x: { attempts: Array<{ status_code: number }> }) => x.attempts[0]?.status_code === 302),
      'the attempt is recorded with 302',
    );
  });

  await t.test('a receiver that does not answer times out, and the retry delivers', async (t) => {
    await receiver.waitFor((r) => r.filter((x) => x.path === '/slow').length >= jobs.length + 1, 'slow retries');
    let d = (await call('GET', `/webhooks/${slow.webhook_id}/deliveries?status=delivered`)).json.deliveries;
    for (let i = 0; i < 100 && d.length < jobs.length; i++) {
      await new Promise((r) => setTimeout(r, 100));
      d = (await call('GET', `/webhooks/${slow.webhook_id}/deliveries?status=delivered`)).json.deliveries;
    }
    t.equal(d.length, jobs.length, 'every search delivered after its timeout');
    for (const x of d) t.match(x.attempts[0], { status_code: null, error: /no answer within 1 s/ });
  });

  await t.test('/metrics: attempts by type and outcome, latency, the outbox', async (t) => {
    const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } });
    t.equal(res.status, 200);
    const text = await res.text();
    t.match(text, /^serp_webhook_attempts_total\{type="search.completed",outcome="delivered"\} \d+$/m, 'delivered');
    t.match(text, /^serp_webhook_attempts_total\{type="search.completed",outcome="retry"\} \d+$/m, 'retried');
    t.match(text, /^serp_webhook_attempt_seconds_count \d+$/m, 'latency');
    t.match(text, /^serp_webhook_outbox_depth \d+$/m, 'outbox depth');
    t.match(text, /^serp_webhook_outbox_oldest_seconds [\d.e+-]+$/m, 'oldest pending');
  });

  await t.test('a blocked search is a search.failed', async (t) => {
    stack.google.setMode({ trouble: { kind: 'captcha' }, query: 'webhook blocked' });
    const res = (await (await submit(base, key, { keyword: 'webhook blocked' })).json()) as { job_id: string };
    await receiver.waitFor(
      (r) => ofType(r, '/all', 'search.failed').some((x) => x.payload?.data.job_id === res.job_id),
      'search.failed',
      240_000,
    );
    stack.google.setMode({});
    const failed = ofType(receiver.received, '/all', 'search.failed').find(
      (x) => x.payload?.data.job_id === res.job_id,
    ) as Received;
    t.match(failed.payload?.data, { job_id: res.job_id, status: 'failed' });
    t.notOk(failed.error);
  });

  await t.test('monitor runs and alerts', async (t) => {
    const created = await call('POST', '/monitors', {
      name: 'hooks',
      keywords: ['webhook monitor'],
      domains: ['merriam-webster.com', '*.wikipedia.org', 'vocabulary.com'],
      schedule: 'daily',
      alerts: { min_move: 1, run_failed: true },
    });
    t.equal(created.status, 201, created.text.slice(0, 200));
    const id = created.json.monitor_id as string;
    const completed = () => ofType(receiver.received, '/all', 'monitor.run_completed');
    await receiver.waitFor(() => completed().some((r) => r.payload?.data.monitor_id === id), 'the first run');
    t.equal((await call('POST', `/monitors/${id}/runs`, {})).status, 202);
    await receiver.waitFor(() => completed().filter((r) => r.payload?.data.monitor_id === id).length >= 2, 'run 2');
    await receiver.waitFor(
      (r) => ofType(r, '/all', 'monitor.alert').some((x) => x.payload?.data.monitor_id === id),
      'a moved alert',
    );
    // a run can raise several alerts, delivered one by one, and the list is a projection of its own: wait until the
    // two agree (or a minute has passed) before comparing them
    const delivered = () =>
      ofType(receiver.received, '/all', 'monitor.alert')
        .map((r) => r.payload?.data)
        .filter((a) => a?.monitor_id === id);
    const listedAlerts = async () => {
      const res = await call('GET', `/monitors/${id}/alerts`);
      return res.status === 200 ? (res.json.alerts as { alert_id: string; run_id: string; kind: string }[]) : [];
    };
    const listedIds = async () => (await listedAlerts()).map((a) => a.alert_id).sort();
    const deliveredIds = () =>
      delivered()
        .map((a) => a?.alert_id as string)
        .sort();
    let listed = await listedIds();
    for (let until = Date.now() + 60_000; Date.now() < until; listed = await listedIds()) {
      if (JSON.stringify(listed) === JSON.stringify(deliveredIds())) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const moved = delivered();
    t.ok(
      moved.some((a) => a?.kind === 'moved'),
      `the rotating pages moved a domain (${moved.map((a) => a?.kind)})`,
    );
    t.same(deliveredIds(), listed, 'the alerts listed are the ones delivered');

    // a blocked run: one run_failed alert, no "dropped out"
    stack.google.setMode({ trouble: { kind: 'captcha' }, query: 'webhook monitor' });
    const blocked = await call('POST', `/monitors/${id}/runs`, {});
    t.equal(blocked.status, 202);
    const runId = blocked.json.run_id as string;
    const ofRun = () => delivered().filter((a) => a?.run_id === runId);
    await receiver.waitFor(() => completed().some((r) => r.payload?.data.run_id === runId), 'the blocked run', 240_000);
    stack.google.setMode({});
    await receiver.waitFor(() => ofRun().length > 0, 'the run_failed alert', 30_000);
    // a run's alerts are one event: once one of them is listed, all are
    let listedForRun: string[] = [];
    for (let until = Date.now() + 30_000; Date.now() < until && !listedForRun.length; ) {
      listedForRun = (await listedAlerts()).filter((a) => a.run_id === runId).map((a) => a.kind);
      if (!listedForRun.length) await new Promise((r) => setTimeout(r, 250));
    }
    await new Promise((r) => setTimeout(r, 500));
    t.same(
      ofRun().map((a) => a?.kind),
      ['run_failed'],
      'a blocked run raises run_failed only',
    );
    t.same(listedForRun, ['run_failed'], 'and lists run_failed only');
  });

  await t.test('quota.low at 80 % and quota.exhausted', async (t) => {
    const tiny = await stack.mintKey(['--tier', 'tiny']);
    await register('/quota', ['quota.low', 'quota.exhausted'], tiny.key);
    // one page a search (depth 10): the subject is the key's quota lines, not the crawl
    for (let i = 1; i <= 5; i++) {
      const res = await submit(base, tiny.key, { keyword: `webhook quota ${i}`, depth: 10 });
      t.equal(res.status, 202, `search ${i} accepted`);
    }
    t.equal(
      (await submit(base, tiny.key, { keyword: 'webhook quota 6', depth: 10 })).status,
      429,
      'the sixth is over quota',
    );
    await receiver.waitFor(
      (r) => ofType(r, '/quota', 'quota.low').length >= 1 && ofType(r, '/quota', 'quota.exhausted').length >= 1,
      'quota messages',
    );
    t.equal(ofType(receiver.received, '/quota', 'quota.low').length, 1, 'quota.low once');
    t.equal(ofType(receiver.received, '/quota', 'quota.exhausted').length, 1, 'quota.exhausted once');
    t.ok(
      receiver.received.filter((r) => r.path === '/quota').every((r) => !r.error),
      'verified',
    );
  });

  await t.test('an endpoint registered mid-month counts the searches made before it', async (t) => {
    // the router does not follow a key with no endpoint for quota messages; the first one it sees reads the month
    const late = await stack.mintKey(['--tier', 'tiny']);
    for (let i = 1; i <= 2; i++) {
      t.equal(
        (await submit(base, late.key, { keyword: `webhook late quota ${i}`, depth: 10 })).status,
        202,
        `early search ${i}`,
      );
    }
    await register('/late-quota', ['quota.low', 'quota.exhausted'], late.key);
    for (let i = 3; i <= 5; i++) {
      t.equal(
        (await submit(base, late.key, { keyword: `webhook late quota ${i}`, depth: 10 })).status,
        202,
        `search ${i}`,
      );
    }
    await receiver.waitFor(
      (r) =>
        ofType(r, '/late-quota', 'quota.low').length >= 1 && ofType(r, '/late-quota', 'quota.exhausted').length >= 1,
      'quota messages of the late endpoint',
    );
    t.same(
      ofType(receiver.received, '/late-quota', 'quota.low').map((r) => r.payload?.data.used),
      [4],
      'quota.low once, at the fourth search of five',
    );
    t.same(
      ofType(receiver.received, '/late-quota', 'quota.exhausted').map((r) => r.payload?.data.used),
      [5],
      'quota.exhausted once, at the fifth',
    );
  });

  await t.test('rotate-secret: deliveries verify with the old secret and the new', async (t) => {
    const rotated = await call('POST', `/webhooks/${all.webhook_id}/rotate-secret`);
    t.equal(rotated.status, 200, rotated.text.slice(0, 200));
    t.match(rotated.json, { secret: /^whsec_/, previous_secret_expires_at: String });
    const expires = Date.parse(rotated.json.previous_secret_expires_at);
    t.ok(Math.abs(expires - Date.now() - 24 * 3_600_000) < 60_000, 'the old secret verifies for 24 h');
    const from = receiver.received.length;
    const job = (await (await submit(base, key, { keyword: 'webhook rotated', depth: 10 })).json()) as {
      job_id: string;
    };
    await receiver.waitFor(
      (r) => ofType(r.slice(from), '/all', 'search.completed').some((x) => x.payload?.data.job_id === job.job_id),
      'a delivery after the rotation',
    );
    const r = ofType(receiver.received.slice(from), '/all', 'search.completed')[0] as Received;
    t.equal(String(r.headers['webhook-signature']).split(' ').length, 2, 'two signatures: new and old');
    receiver.setSecrets('/all', [all.secret]);
    t.doesNotThrow(
      () => new Webhook(all.secret).verify(r.body, r.headers as Record<string, string>),
      'the old secret verifies',
    );
  });

  await t.test('retry and replay send again with the same webhook-id', async (t) => {
    const list = (await call('GET', `/webhooks/${all.webhook_id}/deliveries?status=delivered`)).json.deliveries;
    const target = list.find((d: { event_type: string }) => d.event_type === 'search.completed');
    const from = receiver.received.length;
    const retry = await call('POST', `/webhooks/${all.webhook_id}/deliveries/${target.delivery_id}/retry`);
    t.equal(retry.status, 202, retry.text.slice(0, 200));
    await receiver.waitFor(
      (r) => r.slice(from).some((x) => x.headers['webhook-id'] === target.message_id),
      'the retried delivery',
    );
    const replayFrom = receiver.received.length;
    const sentBefore = receiver.received
      .filter((r) => r.path === '/all' && !r.error)
      .map((r) => String(r.headers['webhook-id']));
    const replay = await call('POST', `/webhooks/${all.webhook_id}/replay`, {
      since: new Date(started - 60_000).toISOString(),
    });
    t.equal(replay.status, 202, replay.text.slice(0, 200));
    const distinct = [...new Set(sentBefore)];
    await receiver.waitFor(
      (r) => {
        const again = new Set(r.slice(replayFrom).map((x) => String(x.headers['webhook-id'])));
        return distinct.every((id) => again.has(id));
      },
      'every message again',
      60_000,
    );
    t.ok(distinct.length >= 8, `the replay sent all ${distinct.length} messages again, each with its webhook-id`);
  });

  await t.test("every body is its type's data, as the registry of event types declares it", async (t) => {
    const seen = new Set<string>();
    const wrong: string[] = [];
    for (const r of receiver.received) {
      if (!r.payload) continue;
      const type = r.payload.type as WebhookEventType;
      seen.add(type);
      const parsed = WEBHOOK_EVENTS[type]?.payload.strict().safeParse(r.payload.data);
      if (!parsed?.success) wrong.push(`${type}: ${parsed?.error.message ?? 'not a type of the registry'}`);
    }
    t.same(wrong, [], 'every data matches its schema, with no field the schema does not name');
    t.same([...seen].sort(), [...WEBHOOK_EVENT_TYPES].sort(), 'every type of the registry was delivered');
  });
});
