import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { monitorApi } from '../support/ranks.js';
import { pollJob, startStack, submit } from '../support/service.js';
import { startReceiver, WEBHOOK_ENV } from '../support/webhookReceiver.js';

const missing = fixturesMissing();

/**
 * Replays are bounded (docs/webhooks.md#replay-bounded): 10 a key an hour, and a message still waiting for the
 * endpoint is not scheduled again. Twenty replays of the same hour used to schedule every message twenty times.
 */
t.test('replays: limited per key and hour, deduplicated against what is queued', { skip: missing }, async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const stack = await startStack(t, { env: { ...WEBHOOK_ENV, SERP_WEBHOOK_BACKOFF_MS: '600000' } });
  const base = stack.svc.url;
  const { key } = await stack.mintKey(['--tier', 'pro']);
  const api = monitorApi(base, key);
  const hook = await api.call('POST', '/webhooks', { url: `${receiver.origin}/r`, events: ['search.completed'] });
  t.equal(hook.status, 201);
  const id = hook.json.webhook_id as string;
  receiver.setSecrets('/r', [hook.json.secret]);

  const search = async (keyword: string) => {
    const res = (await (await submit(base, key, { keyword })).json()) as { job_id: string };
    t.equal((await pollJob(base, key, res.job_id)).status, 200, `${keyword} ends`);
  };
  for (const k of ['replay one', 'replay two', 'replay three']) await search(k);
  await receiver.waitFor((all) => all.length >= 3, 'the three first deliveries');

  // from now on the receiver fails every attempt: what is scheduled stays pending (the next retry is 10 min away)
  receiver.setAnswer(() => ({ status: 503 }));
  const since = new Date(Date.now() - 3_600_000).toISOString();
  const replays = await Promise.all(
    Array.from({ length: 20 }, () => api.call('POST', `/webhooks/${id}/replay`, { since })),
  );
  const accepted = replays.filter((r) => r.status === 202);
  const refused = replays.filter((r) => r.status === 429);
  t.equal(accepted.length, 10, '10 replays a key an hour');
  t.equal(refused.length, 10, 'the other 10 are refused');
  t.match(refused[0]?.json.detail, /10 replays an hour/);
  t.ok(Number(refused[0]?.headers.get('retry-after')) > 0, 'with Retry-After');

  // a search after the replays: once its delivery is listed, the router has gone past every replay (log order)
  await search('after the replays');
  const deliveries = async () =>
    (await api.call('GET', `/webhooks/${id}/deliveries?limit=1000`)).json.deliveries as Array<{
      message_id: string;
      replay_id: string | null;
    }>;
  const deadline = Date.now() + 60_000;
  let list = await deliveries();
  while (list.filter((d) => !d.replay_id).length < 4 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    list = await deliveries();
  }
  const replayed = list.filter((d) => d.replay_id);
  t.equal(replayed.length, 3, `each of the three messages scheduled once by ten replays (${replayed.length})`);
  t.equal(new Set(replayed.map((d) => d.message_id)).size, 3);

  const old = await api.call('POST', `/webhooks/${id}/replay`, {
    since: new Date(Date.now() - 8 * 86_400_000).toISOString(),
  });
  t.equal(old.status, 422, 'a since more than 7 days back');
  t.match(old.json.detail, /within the last 7 days/);
});

/**
 * A replay schedules at most 1,000 messages (docs/webhooks.md#replay-bounded), the oldest first: 1,001 messages in
 * the window give 1,000 deliveries again, and the newest is the one left for a replay asked from there. The messages
 * are cache answers (a new job each, no crawl), so a thousand of them take seconds.
 */
t.test('a replay sends at most 1,000 messages, the oldest first', { skip: missing }, async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  // a timeout far above a loopback answer's time: an attempt timed out under load is retried, and its message
  // arrives twice (at least once is the contract), which would blur the count of what the replay sent
  const stack = await startStack(t, { env: { ...WEBHOOK_ENV, SERP_WEBHOOK_TIMEOUT_MS: '15000' } });
  const base = stack.svc.url;
  const { key } = await stack.mintKey(['--tier', 'enterprise', '--rate', '5000']);
  const api = monitorApi(base, key);
  const hook = await api.call('POST', '/webhooks', { url: `${receiver.origin}/r`, events: ['search.completed'] });
  t.equal(hook.status, 201);
  const id = hook.json.webhook_id as string;
  receiver.setSecrets('/r', [hook.json.secret]);

  const first = (await (await submit(base, key, { keyword: 'replay cap', depth: 10 })).json()) as { job_id: string };
  t.equal((await pollJob(base, key, first.job_id)).status, 200, 'the crawled search ends');
  const MESSAGES = 1_001;
  let cached = 0;
  const next = async (): Promise<void> => {
    while (cached < MESSAGES - 1) {
      cached++;
      const res = await submit(base, key, { keyword: 'replay cap', depth: 10 });
      if (res.status !== 200) throw new Error(`a cached answer was ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 16 }, next));
  const ids = (all: typeof receiver.received) => all.map((r) => String(r.headers['webhook-id']));
  await receiver.waitFor((all) => new Set(ids(all)).size >= MESSAGES, `${MESSAGES} first deliveries`, 180_000);
  const originals = [...new Set(ids(receiver.received))];
  t.equal(originals.length, MESSAGES, `each of the ${MESSAGES} messages delivered`);

  const countsOf = () => {
    const counts = new Map<string, number>();
    for (const x of ids(receiver.received)) counts.set(x, (counts.get(x) ?? 0) + 1);
    return counts;
  };
  const before = countsOf();
  const replay = await api.call('POST', `/webhooks/${id}/replay`, {
    since: new Date(Date.now() - 3_600_000).toISOString(),
  });
  t.equal(replay.status, 202);
  // a search after the replay: once it is delivered, the router has gone past the replay (log order)
  const after = (await (await submit(base, key, { keyword: 'after the cap', depth: 10 })).json()) as {
    job_id: string;
  };
  await pollJob(base, key, after.job_id);
  await receiver.waitFor(
    (all) => {
      if (!all.some((r) => r.payload?.data.job_id === after.job_id)) return false;
      const now = countsOf();
      return originals.filter((x) => (now.get(x) ?? 0) > (before.get(x) ?? 0)).length >= 1_000;
    },
    'the replayed deliveries and the search after them',
    180_000,
  );
  // and nothing is left to send: every delivery scheduled has arrived
  const drained = Date.now() + 60_000;
  while (Date.now() < drained) {
    const pending = await api.call('GET', `/webhooks/${id}/deliveries?status=pending&limit=1`);
    if ((pending.json.deliveries as unknown[]).length === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const seen = countsOf();
  const again = originals.filter((x) => (seen.get(x) ?? 0) > (before.get(x) ?? 0));
  t.equal(again.length, 1_000, 'the replay sent 1,000 of the 1,001 messages again');
  // job ids are ordered by time: the one left out is among the last submitted (16 were in flight at a time)
  const jobOf = new Map(
    receiver.received.map((r) => [String(r.headers['webhook-id']), String(r.payload?.data.job_id)]),
  );
  const left = originals.filter((x) => seen.get(x) === before.get(x));
  const newest = originals
    .map((x) => jobOf.get(x)!)
    .sort()
    .slice(-16);
  t.equal(left.length, 1, 'one message left out');
  t.ok(
    newest.includes(jobOf.get(left[0]!)!),
    'the one left out is among the newest: a replay reads its window from the start',
  );
  t.notOk(
    receiver.received.some((r) => !r.payload),
    'every delivery verified with the endpoint secret',
  );
});
