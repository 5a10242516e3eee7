import t from 'tap';
import { monitorApi } from '../support/ranks.js';
import { startStack } from '../support/service.js';
import { WEBHOOK_ENV } from '../support/webhookReceiver.js';

/**
 * Every per-key limit holds when the creates race (docs/security.md#per-key): each is decided on the key's limits
 * stream (or the monitor's own stream) with its expected version, so N parallel requests over real HTTP take exactly
 * what the limit leaves. No request here leaves the machine: the endpoints' URLs are never called.
 */
t.test('per-key limits under parallel requests, through a listening port', async (t) => {
  const stack = await startStack(t, { env: { ...WEBHOOK_ENV, SERP_MONITOR_TICK_MS: '600000' } });
  const base = stack.svc.url;
  const statuses = (list: Array<{ status: number }>) =>
    list.reduce<Record<number, number>>((acc, r) => {
      acc[r.status] = (acc[r.status] ?? 0) + 1;
      return acc;
    }, {});

  t.test('20 parallel webhook creates against a limit of 10: exactly 10 are created', async (t) => {
    const { key } = await stack.mintKey(['--tier', 'pro']);
    const api = monitorApi(base, key);
    const res = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.call('POST', '/webhooks', { url: `http://127.0.0.1:9/race/${i}`, events: ['search.completed'] }),
      ),
    );
    t.same(statuses(res), { 201: 10, 422: 10 }, '10 created, 10 refused');
    t.ok(
      res.filter((r) => r.status === 422).every((r) => /10 webhook endpoints/.test(r.json.detail)),
      'each refusal says the limit',
    );
    t.equal((await api.call('GET', '/webhooks')).json.webhooks.length, 10, 'the key has 10');
    // a deleted endpoint gives its place back
    const one = res.find((r) => r.status === 201)!.json.webhook_id as string;
    t.equal((await api.call('DELETE', `/webhooks/${one}`)).status, 204);
    const again = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        api.call('POST', '/webhooks', { url: `http://127.0.0.1:9/again/${i}`, events: ['search.completed'] }),
      ),
    );
    t.same(statuses(again), { 201: 1, 422: 4 }, 'after one delete, one more of five');
  });

  t.test('10 parallel monitor creates on the free tier (2 monitors): exactly 2', async (t) => {
    const { key } = await stack.mintKey(['--tier', 'free']);
    const api = monitorApi(base, key);
    const res = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api.call('POST', '/monitors', {
          name: `race ${i}`,
          keywords: [`race keyword ${i}`],
          domains: ['example.com'],
          schedule: 'daily',
        }),
      ),
    );
    t.same(statuses(res), { 201: 2, 422: 8 }, '2 created, 8 refused');
    t.ok(
      res.filter((r) => r.status === 422).every((r) => /allows 2 monitors per key/.test(r.json.detail)),
      'each refusal says the limit',
    );
    t.equal((await api.call('GET', '/monitors')).json.monitors.length, 2, 'the key has 2');
  });

  t.test("parallel keyword additions stop at the tier's keywords per monitor (10)", async (t) => {
    const { key } = await stack.mintKey(['--tier', 'free']);
    const api = monitorApi(base, key);
    const created = await api.call('POST', '/monitors', {
      name: 'keywords race',
      keywords: Array.from({ length: 8 }, (_, i) => `kw ${i}`),
      domains: ['example.com'],
      schedule: 'daily',
    });
    t.equal(created.status, 201);
    const id = created.json.monitor_id as string;
    const res = await Promise.all(
      Array.from({ length: 6 }, (_, i) => api.call('PATCH', `/monitors/${id}`, { add_keywords: [`more ${i}`] })),
    );
    t.same(statuses(res), { 200: 2, 422: 4 }, 'two of six additions fit');
    t.equal((await api.call('GET', `/monitors/${id}`)).json.keywords.length, 10, 'the monitor has 10 keywords');
  });

  t.test('10 parallel manual runs of one monitor: one starts, the others are 409 naming it', async (t) => {
    const { key } = await stack.mintKey(['--tier', 'pro']);
    const api = monitorApi(base, key);
    const created = await api.call('POST', '/monitors', {
      name: 'runs race',
      keywords: ['runs race keyword'],
      domains: ['example.com'],
      schedule: 'daily',
    });
    t.equal(created.status, 201);
    const id = created.json.monitor_id as string;
    const res = await Promise.all(Array.from({ length: 10 }, () => api.call('POST', `/monitors/${id}/runs`, {})));
    t.same(statuses(res), { 202: 1, 409: 9 }, 'one run');
    const runId = res.find((r) => r.status === 202)!.json.run_id as string;
    t.ok(
      res.filter((r) => r.status === 409).every((r) => r.json.detail.includes(runId)),
      'each refusal names the run in progress',
    );
  });
});
