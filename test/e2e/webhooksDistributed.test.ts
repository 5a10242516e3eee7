import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import t from 'tap';
import { startLocalCluster } from '../../services/cli/dev/cluster.js';
import { startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { natsUnavailable } from '../support/nats.js';
import { cliArgs, pollJob, removeDir, submit, tempDataDir, UNPACED } from '../support/service.js';
import { startReceiver, WEBHOOK_ENV } from '../support/webhookReceiver.js';

/**
 * Webhooks in distributed mode (docs/webhooks.md): a real three-node nats-server cluster and `serp-api serve --role …`
 * processes, with two dispatchers, each running the delivery worker. Every finished search is delivered once per
 * message (the receiver answers 204 at once, so an attempt sent twice would be seen twice), verified with
 * `standardwebhooks`, and a receiver's failures are retried by whichever dispatcher claims the attempt.
 */
const unavailable = natsUnavailable() ?? fixturesMissing('serp');

t.test('two dispatchers deliver each message once', { skip: unavailable ?? false, timeout: 600_000 }, async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const google = await startFakeGoogle({});
  const dir = tempDataDir('serp-webhooks-cluster');
  const cluster = await startLocalCluster({
    dir,
    log: () => undefined,
    apis: 1,
    crawlers: 1,
    env: {
      SERP_GOOGLE_ORIGIN: google.origin,
      SERP_FETCHER: 'http',
      ...UNPACED,
      ...WEBHOOK_ENV,
      SERP_LOG_LEVEL: 'warn',
    },
    command: [process.execPath, ...cliArgs],
  });
  t.teardown(async () => {
    await cluster.stop();
    await google.close();
    removeDir(dir);
  });
  await cluster.add('dispatcher', 'dispatcher-2');
  const [A] = cluster.apiUrls as [string];
  const minted = await fetch(`${A}/admin/api/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${cluster.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ label: `hooks-${randomBytes(3).toString('hex')}`, tier: 'pro' }),
  });
  const { key } = (await minted.json()) as { key: string };
  const created = await fetch(`${A}/v1/webhooks`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${receiver.origin}/hook`, events: ['search.completed'] }),
  });
  t.equal(created.status, 201);
  const hook = (await created.json()) as { webhook_id: string; secret: string };
  receiver.setSecrets('/hook', [hook.secret]);
  // every message's first attempt fails: the retry is claimed by one dispatcher or the other, never both
  const seen = new Map<string, number>();
  receiver.setAnswer((r) => {
    const id = String(r.headers['webhook-id']);
    seen.set(id, (seen.get(id) ?? 0) + 1);
    return { status: seen.get(id) === 1 ? 503 : 204 };
  });

  const jobs: string[] = [];
  for (let i = 0; i < 8; i++) {
    const res = await submit(A, key, { keyword: `webhook cluster ${i} ${randomBytes(2).toString('hex')}` });
    jobs.push(((await res.json()) as { job_id: string }).job_id);
  }
  for (const j of jobs) t.equal((await pollJob(A, key, j)).status, 200);
  await receiver.waitFor((r) => r.length >= 2 * jobs.length, 'two attempts per search', 120_000);
  // time for a duplicate attempt to show up, if a second dispatcher were to send one
  await new Promise((r) => setTimeout(r, 2000));
  t.equal(seen.size, jobs.length, 'one webhook-id per search');
  t.same(
    [...seen.values()],
    jobs.map(() => 2),
    'each message: one failed attempt and one delivery, no attempt sent twice',
  );
  t.ok(
    receiver.received.every((r) => !r.error),
    'every attempt verifies with standardwebhooks',
  );
  t.same(new Set(receiver.received.map((r) => r.payload?.data.job_id)), new Set(jobs), 'every search delivered');

  // a replay (docs/webhooks.md#replay-recorded-by-reference): both dispatchers' routers read the request, one
  // records it; both deliverers claim its deliveries on the replay's stream, and each message arrives once more
  const first = new Map(receiver.received.map((r) => [String(r.headers['webhook-id']), r.body]));
  const pending = async () =>
    (
      (await (
        await fetch(`${A}/v1/webhooks/${hook.webhook_id}/deliveries?status=pending&limit=1`, {
          headers: { 'x-api-key': key },
        })
      ).json()) as { deliveries: unknown[] }
    ).deliveries.length;
  for (let i = 0; i < 300 && (await pending()) > 0; i++) await new Promise((r) => setTimeout(r, 200));
  t.equal(await pending(), 0, 'every first delivery recorded before the replay');
  receiver.setAnswer(() => ({ status: 204 }));
  const count = receiver.received.length;
  const replay = await fetch(`${A}/v1/webhooks/${hook.webhook_id}/replay`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ since: new Date(Date.now() - 3_600_000).toISOString() }),
  });
  t.equal(replay.status, 202, 'the replay is accepted');
  await receiver.waitFor((r) => r.length >= count + jobs.length, 'the replayed messages', 120_000);
  await new Promise((r) => setTimeout(r, 2000));
  const again = receiver.received.slice(count);
  t.equal(again.length, jobs.length, 'each message sent once more, by one dispatcher');
  t.same(new Set(again.map((r) => String(r.headers['webhook-id']))), new Set(first.keys()), 'with its webhook-id');
  t.ok(
    again.every((r) => r.payload && r.body === first.get(String(r.headers['webhook-id']))),
    'and its first body, verified',
  );
});
