import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { cli, pollJob, startService, startStack, submit } from '../support/service.js';
import { startReceiver, WEBHOOK_ENV } from '../support/webhookReceiver.js';

/**
 * Deliveries survive a crash (docs/webhooks.md): `kill -9` while a delivery's POST is in flight (sent, never
 * answered), then a restart: the delivery is sent again with the same `webhook-id` and verifies. Then `projections
 * rebuild` gives the same endpoints, deliveries and alerts as before.
 */
const missing = fixturesMissing();

const get = async (base: string, key: string, path: string) => {
  const res = await fetch(`${base}/v1${path}`, { headers: { 'x-api-key': key } });
  return { status: res.status, text: await res.text() };
};

t.test('kill -9 with a delivery in flight, then projections rebuild', { skip: missing }, async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  let hang = true;
  receiver.setAnswer(() => (hang ? 'hang' : { status: 204 }));
  // the attempt hangs until long after the kill: the restarted service must not wait for it
  const env = { ...WEBHOOK_ENV, SERP_WEBHOOK_TIMEOUT_MS: '60000' };
  const stack = await startStack(t, { google: { rotate: true }, env, teardown: 'kill' });
  const { key } = await stack.mintKey(['--tier', 'pro']);
  const created = await fetch(`${stack.svc.url}/v1/webhooks`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({
      url: `${receiver.origin}/hook`,
      events: ['search.completed', 'monitor.run_completed', 'monitor.alert'],
    }),
  });
  t.equal(created.status, 201);
  const hook = (await created.json()) as { webhook_id: string; secret: string };
  receiver.setSecrets('/hook', [hook.secret]);

  const job = (await (await submit(stack.svc.url, key, { keyword: 'webhook durable' })).json()) as { job_id: string };
  t.equal((await pollJob(stack.svc.url, key, job.job_id)).status, 200);
  await receiver.waitFor((r) => r.length >= 1, 'the first attempt (held open)');
  const first = receiver.received[0]!;
  t.notOk(first.error, 'the first attempt verifies');
  t.equal(first.payload?.data.job_id, job.job_id);

  await stack.svc.kill();
  hang = false;
  const again = await startService(stack.data, { SERP_GOOGLE_ORIGIN: stack.google.origin, ...env });
  t.teardown(() => again.kill());
  await receiver.waitFor((r) => r.length >= 2, 'the delivery after the restart');
  const second = receiver.received[1]!;
  t.notOk(second.error, 'it verifies');
  t.equal(second.headers['webhook-id'], first.headers['webhook-id'], 'with the same webhook-id');
  t.equal(second.body, first.body, 'and the same body');

  // a monitor with alerts: two runs over the rotating pages move a domain
  const base = again.url;
  const mon = await fetch(`${base}/v1/monitors`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'durable',
      keywords: ['webhook durable monitor'],
      domains: ['merriam-webster.com', '*.wikipedia.org'],
      schedule: 'daily',
      alerts: { min_move: 1 },
    }),
  });
  t.equal(mon.status, 201);
  const monitorId = ((await mon.json()) as { monitor_id: string }).monitor_id;
  const runs = () => receiver.received.filter((r) => r.payload?.type === 'monitor.run_completed').length;
  await receiver.waitFor(() => runs() >= 1, 'the first run');
  const run = await fetch(`${base}/v1/monitors/${monitorId}/runs`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: '{}',
  });
  t.equal(run.status, 202, 'a manual run');
  await receiver.waitFor(() => runs() >= 2, 'the second run');
  await receiver.waitFor((r) => r.some((x) => x.payload?.type === 'monitor.alert'), 'an alert');
  // the deliveries' projection catches up with the last answer
  await new Promise((r) => setTimeout(r, 1000));

  const paths = [
    '/webhooks',
    `/webhooks/${hook.webhook_id}`,
    `/webhooks/${hook.webhook_id}/deliveries`,
    `/monitors/${monitorId}/alerts`,
  ];
  const before = await Promise.all(paths.map((p) => get(base, key, p)));
  for (const [i, b] of before.entries()) t.equal(b.status, 200, `${paths[i]}: 200`);
  t.ok(JSON.parse(before[3]!.text).alerts.length >= 1, 'alerts are listed');
  await again.stop();
  t.match(await cli(['projections', 'rebuild', '--data', stack.data]), /rebuilt/);
  const third = await startService(stack.data, { SERP_GOOGLE_ORIGIN: stack.google.origin, ...env });
  t.teardown(() => third.stop());
  const count = receiver.received.length;
  const after = await Promise.all(paths.map((p) => get(third.url, key, p)));
  for (const [i, a] of after.entries()) t.same(JSON.parse(a.text), JSON.parse(before[i]!.text), `${paths[i]}: same`);
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(receiver.received.length, count, 'the rebuild sends nothing again');
});
