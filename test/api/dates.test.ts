import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t, { type Test } from 'tap';
import type { Resolver } from '../../services/webhooks/commands/webhookSafety.js';
import { buildTestApp } from '../support/app.js';

/**
 * Every date or instant the API accepts refuses an impossible one with a 422 that names the field and the reason
 * (docs/api.md#dates-and-times): `Date.parse` alone took `2026-02-30` as March 2. The fields: a replay's `since`, a
 * delivery list's `since`, and `from`/`to` of a monitor's history, visibility, changes and alerts (and of the MCP tool
 * serp_rank_history, which forwards them).
 */
const resolve: Resolver = async () => [{ address: '93.184.216.34', family: 4 }];

/** an impossible value, and what the 422 must say of it */
const IMPOSSIBLE: Array<[string, RegExp]> = [
  ['2026-02-30T00:00:00Z', /2026-02-30 is not a date: February 2026 has 28 days/],
  ['2026-02-29', /February 2026 has 28 days/],
  ['2026-04-31', /April 2026 has 30 days/],
  ['2026-13-01', /no month 13/],
  ['2026-03-01T25:00:00Z', /25:00 is not a time of day: hours are 00–23/],
  ['2026-03-01T12:60Z', /minutes are 00–59/],
  ['2026-03-01T12:00:61Z', /seconds are 00–59/],
  ['2026-03-01T12:00:00+24:00', /not a UTC offset/],
  ['March 1st', /must be an ISO date or instant/],
];

const setup = async (t: Test) => {
  const { app, mintKey } = await buildTestApp(t, {}, { resolve });
  const key = await mintKey('pro');
  const call = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
    const res = await app.inject({
      method,
      url: `/v1${url}`,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    return {
      status: res.statusCode,
      json: res.json() as { detail?: string; webhook_id?: string; monitor_id?: string },
    };
  };
  const webhook = await call('POST', '/webhooks', { url: 'https://hooks.example.com/x', events: ['search.completed'] });
  const monitor = await call('POST', '/monitors', {
    name: 'dates',
    keywords: ['coffee'],
    domains: ['example.com'],
    schedule: 'weekly',
  });
  t.equal(webhook.status, 201, 'a webhook to replay');
  t.equal(monitor.status, 201, 'a monitor to read');
  return { app, key, call, webhookId: webhook.json.webhook_id!, monitorId: monitor.json.monitor_id! };
};

t.test('dates › every date field refuses an impossible date with a 422 naming the field', async (t) => {
  const { call, webhookId, monitorId } = await setup(t);
  const today = new Date().toISOString().slice(0, 10);
  const fields: Array<{ field: string; send: (v: string) => ReturnType<typeof call> }> = [
    { field: 'since', send: (v) => call('POST', `/webhooks/${webhookId}/replay`, { since: v }) },
    {
      field: 'querystring since',
      send: (v) => call('GET', `/webhooks/${webhookId}/deliveries?since=${encodeURIComponent(v)}`),
    },
  ];
  for (const route of ['history', 'visibility', 'changes', 'alerts']) {
    for (const name of ['from', 'to']) {
      fields.push({
        field: `querystring ${name}`,
        send: (v) => call('GET', `/monitors/${monitorId}/${route}?${name}=${encodeURIComponent(v)}`),
      });
    }
  }
  const labels = ['replay since', 'deliveries since'].concat(
    ['history', 'visibility', 'changes', 'alerts'].flatMap((r) => [`${r} from`, `${r} to`]),
  );
  for (const [i, { field, send }] of fields.entries()) {
    t.test(labels[i]!, async (t) => {
      for (const [value, says] of IMPOSSIBLE) {
        const res = await send(value);
        t.equal(res.status, 422, `${value} is refused`);
        t.match(res.json.detail, says, `${value}: the detail says why`);
        t.ok(res.json.detail?.startsWith(`${field}: `), `${value}: the detail names ${field}: ${res.json.detail}`);
      }
      for (const value of [today, `${today}T00:00Z`, `${today}T00:00:00.000+00:00`]) {
        const res = await send(value);
        t.ok(res.status < 300, `${value} is still a date (${res.status} ${res.json.detail ?? ''})`);
      }
    });
  }
});

t.test('dates › a leap day is a date in a leap year only', async (t) => {
  const { call, monitorId } = await setup(t);
  t.equal((await call('GET', `/monitors/${monitorId}/history?from=2028-02-29`)).status, 200, '2028-02-29');
  const refused = await call('GET', `/monitors/${monitorId}/history?from=2027-02-29`);
  t.equal(refused.status, 422, '2027-02-29');
  t.match(refused.json.detail, /querystring from: 2027-02-29 is not a date: February 2027 has 28 days/);
});

t.test('dates › over real HTTP: a replay since Feb 30, and serp_rank_history from Apr 31', async (t) => {
  const { app, key, webhookId, monitorId } = await setup(t);
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const res = await fetch(`${base}/v1/webhooks/${webhookId}/replay`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ since: '2026-02-30T00:00:00Z' }),
  });
  t.equal(res.status, 422, 'the replay is refused');
  t.match(await res.json(), {
    detail: 'since: 2026-02-30 is not a date: February 2026 has 28 days',
    code: 'SERP_API_INVALID_REQUEST',
  });

  const client = new Client({ name: 'dates-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { 'x-api-key': key } } }),
  );
  t.teardown(() => client.close());
  const tool = (await client.callTool({
    name: 'serp_rank_history',
    arguments: { monitor_id: monitorId, from: '2026-04-31' },
  })) as { isError?: boolean; content: Array<{ text?: string }> };
  t.equal(tool.isError, true, 'the tool call is an error');
  t.match(tool.content[0]?.text, /2026-04-31 is not a date: April 2026 has 30 days at from/, 'naming from and why');
  const fine = (await client.callTool({
    name: 'serp_rank_history',
    arguments: { monitor_id: monitorId, from: '2026-04-30' },
  })) as { isError?: boolean; structuredContent?: { series?: unknown[] } };
  t.notOk(fine.isError, 'April 30 is a date');
});
