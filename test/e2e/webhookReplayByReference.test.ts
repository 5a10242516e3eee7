import { join } from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { monitorApi } from '../support/ranks.js';
import { cli, pollJob, type RunningService, startService, startStack, submit } from '../support/service.js';
import { type Receiver, startReceiver, WEBHOOK_ENV } from '../support/webhookReceiver.js';

const missing = fixturesMissing();

/**
 * A replay is recorded by reference (docs/webhooks.md#replay-recorded-by-reference): one event naming the endpoint,
 * the window and a short entry per message selected, never a body; each replayed delivery's body is made again from
 * the log event it tells of, and arrives with the original's `webhook-id` and bytes.
 */

/** what the log holds after `position`: events by type, and their bytes (data, metadata, stream, type) */
const logSince = (data: string, position: number) => {
  const db = new Database(join(data, 'events.db'), { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare(
        `SELECT type, count(*) AS n, sum(length(data) + length(metadata) + length(stream) + length(type)) AS bytes
         FROM events WHERE global_position > ? GROUP BY type`,
      )
      .all(position) as Array<{ type: string; n: number; bytes: number }>;
    const head = (db.prepare('SELECT max(global_position) AS p FROM events').get() as { p: number }).p;
    const bodies = (
      db
        .prepare(
          `SELECT count(*) AS n FROM events WHERE global_position > ? AND json_extract(data, '$.body') IS NOT NULL`,
        )
        .get(position) as { n: number }
    ).n;
    return { byType: new Map(rows.map((r) => [r.type, r])), head, bodies };
  } finally {
    db.close();
  }
};

const ids = (all: Receiver['received']) => all.map((r) => String(r.headers['webhook-id']));

const pendingLeft = async (api: ReturnType<typeof monitorApi>, webhookId: string, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const page = await api.call('GET', `/webhooks/${webhookId}/deliveries?status=pending&limit=1`);
    if ((page.json.deliveries as unknown[]).length === 0 || Date.now() > deadline) return page.json.deliveries.length;
    await new Promise((r) => setTimeout(r, 200));
  }
};

/** a key with `messages` search.completed messages delivered once each: one crawl, then answers from its cache */
const withMessages = async (t: Test, messages: number, env: NodeJS.ProcessEnv = {}) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const stack = await startStack(t, { env: { ...WEBHOOK_ENV, SERP_WEBHOOK_TIMEOUT_MS: '15000', ...env } });
  const base = stack.svc.url;
  const { key } = await stack.mintKey(['--tier', 'enterprise', '--rate', '5000']);
  const api = monitorApi(base, key);
  const hook = await api.call('POST', '/webhooks', { url: `${receiver.origin}/r`, events: ['search.completed'] });
  t.equal(hook.status, 201, 'the endpoint is created');
  receiver.setSecrets('/r', [hook.json.secret]);
  const first = (await (await submit(base, key, { keyword: 'by reference', depth: 10 })).json()) as { job_id: string };
  t.equal((await pollJob(base, key, first.job_id)).status, 200, 'the crawled search ends');
  let cached = 1;
  const next = async (): Promise<void> => {
    while (cached < messages) {
      cached++;
      const res = await submit(base, key, { keyword: 'by reference', depth: 10 });
      if (res.status !== 200) throw new Error(`a cached answer was ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 8 }, next));
  await receiver.waitFor((all) => new Set(ids(all)).size >= messages, `${messages} first deliveries`, 120_000);
  const originals = new Map<string, string>();
  for (const r of receiver.received)
    if (!originals.has(String(r.headers['webhook-id']))) originals.set(String(r.headers['webhook-id']), r.body);
  // a replay does not select what is still waiting for the endpoint (docs/webhooks.md#replay-bounded): each first
  // delivery's outcome is in the read models before the test replays
  t.equal(await pendingLeft(api, hook.json.webhook_id), 0, 'no first delivery left pending');
  return { receiver, stack, key, api, webhookId: hook.json.webhook_id as string, originals };
};

const countsOf = (receiver: Receiver) => {
  const counts = new Map<string, number>();
  for (const x of ids(receiver.received)) counts.set(x, (counts.get(x) ?? 0) + 1);
  return counts;
};

t.test(
  'four replays: one small event each, the original bodies and ids, and a rebuild lists the same',
  { skip: missing },
  async (t) => {
    // enough messages that a body each would show in the bytes a replay adds, and several replays one after another:
    // each still one event, none with a body (docs/webhooks.md#replay-recorded-by-reference)
    const MESSAGES = 50;
    const REPLAYS = 4;
    const { receiver, stack, key, api, webhookId, originals } = await withMessages(t, MESSAGES);
    t.equal(originals.size, MESSAGES, `${MESSAGES} messages delivered once`);
    t.notOk(
      receiver.received.some((r) => !r.payload),
      'every first delivery verifies',
    );
    const start = logSince(stack.data, 0).head;

    const since = new Date(Date.now() - 3_600_000).toISOString();
    let position = start;
    const perReplay: Array<{ events: number; bytes: number; selected: number }> = [];
    for (let i = 0; i < REPLAYS; i++) {
      const before = countsOf(receiver);
      const replay = await api.call('POST', `/webhooks/${webhookId}/replay`, { since });
      t.equal(replay.status, 202, `replay ${i + 1} accepted`);
      await receiver.waitFor(
        () => {
          const now = countsOf(receiver);
          return [...originals.keys()].every((x) => (now.get(x) ?? 0) > (before.get(x) ?? 0));
        },
        `replay ${i + 1}: every message again`,
        120_000,
      );
      t.equal(await pendingLeft(api, webhookId), 0, `replay ${i + 1}: nothing left pending`);
      const log = logSince(stack.data, position);
      const recorded = log.byType.get('WebhookReplayScheduled');
      perReplay.push({ events: recorded?.n ?? 0, bytes: recorded?.bytes ?? 0, selected: MESSAGES });
      position = log.head;
    }
    for (const [i, r] of perReplay.entries()) {
      t.equal(r.events, 1, `replay ${i + 1} is recorded as one event`);
      // a constant (the endpoint, the window) and one short entry per message: the position, the webhook-id, the type
      t.ok(r.bytes < 1_000 + 80 * r.selected, `replay ${i + 1}: ${r.bytes} bytes for ${r.selected} messages`);
    }
    const all = logSince(stack.data, start);
    t.notOk(all.byType.has('WebhookDeliveryScheduled'), 'no delivery is scheduled one event a message');
    t.equal(all.bodies, 0, 'no event of the replays carries a body');
    const bytes = [...all.byType.values()].reduce((s, r) => s + r.bytes, 0);
    t.comment(
      `${REPLAYS} replays of ${MESSAGES} messages, delivered: ${bytes} bytes of events (${Math.round(bytes / (REPLAYS * MESSAGES))} a message), ` +
        [...all.byType.values()].map((r) => `${r.type} ${r.n}×${Math.round(r.bytes / r.n)}`).join(', '),
    );

    const replayed = receiver.received.filter((r) => originals.has(String(r.headers['webhook-id'])));
    t.equal(replayed.length, MESSAGES * (REPLAYS + 1), 'each message arrived once and once a replay');
    t.same(
      replayed.filter((r) => !r.payload || r.body !== originals.get(String(r.headers['webhook-id']))).length,
      0,
      "every replayed delivery verifies with the endpoint's secret and is the original's body, byte for byte",
    );

    // the delivery list, then the same after `projections rebuild`
    const pages = [
      `/webhooks/${webhookId}/deliveries?limit=1000`,
      `/webhooks/${webhookId}/deliveries?limit=7`,
      `/webhooks/${webhookId}/deliveries?status=delivered&limit=300`,
      `/webhooks/${webhookId}`,
    ];
    const read = async (svc: RunningService) =>
      Promise.all(
        pages.map(async (p) => {
          const res = await fetch(`${svc.url}/v1${p}`, { headers: { 'x-api-key': key } });
          return { status: res.status, json: await res.json() };
        }),
      );
    const before = await read(stack.svc);
    const listed = before[0]!.json.deliveries as Array<{ replay_id: string | null; attempts: unknown[] }>;
    t.equal(
      listed.length,
      MESSAGES * (REPLAYS + 1),
      'every delivery listed, oldest first: the first ones, then each replay’s',
    );
    t.ok(
      listed.slice(-MESSAGES * REPLAYS).every((d) => d.replay_id && d.attempts.length === 1),
      `the newest ${MESSAGES * REPLAYS} are replayed deliveries, each with its attempt`,
    );
    await stack.svc.stop();
    t.match(await cli(['projections', 'rebuild', '--data', stack.data]), /rebuilt/);
    const again = await startService(stack.data, {
      SERP_GOOGLE_ORIGIN: stack.google.origin,
      ...WEBHOOK_ENV,
      SERP_WEBHOOK_TIMEOUT_MS: '15000',
    });
    t.teardown(() => again.stop());
    const count = receiver.received.length;
    const after = await read(again);
    for (const [i, a] of after.entries()) t.same(a, before[i], `${pages[i]}: the same after the rebuild`);
    // a search after the rebuild: once it arrives, the router and deliverer have gone past everything before it
    const late = (await (await submit(again.url, key, { keyword: 'by reference', depth: 10 })).json()) as {
      job_id: string;
    };
    await receiver.waitFor((r) => r.some((x) => x.payload?.data.job_id === late.job_id), 'a search after the rebuild');
    t.equal(receiver.received.length, count + 1, 'the rebuild sends nothing again');
  },
);

t.test(
  'a service killed mid-replay loses nothing and sends again only what was in flight',
  { skip: missing },
  async (t) => {
    // more messages than the 40 answered before the receiver holds requests open: the kill finds attempts in flight
    const MESSAGES = 80;
    const { receiver, stack, key, api, webhookId, originals } = await withMessages(t, MESSAGES);
    const before = countsOf(receiver);
    // the receiver answers the replay's first 40 arrivals, then holds every request open: the kill finds attempts in flight
    let answered = 0;
    receiver.setAnswer(() => (answered++ < 40 ? { status: 204 } : 'hang'));
    const replay = await api.call('POST', `/webhooks/${webhookId}/replay`, {
      since: new Date(Date.now() - 3_600_000).toISOString(),
    });
    t.equal(replay.status, 202);
    await receiver.waitFor(() => answered >= 45, 'the replay under way, some attempts held open', 60_000);
    await stack.svc.kill();
    // every request that arrived after the first 40 is held open: the attempts in flight when the service died
    const inFlightAtKill = answered - 40;
    receiver.setAnswer(() => ({ status: 204 }));
    const again = await startService(stack.data, {
      SERP_GOOGLE_ORIGIN: stack.google.origin,
      ...WEBHOOK_ENV,
      SERP_WEBHOOK_TIMEOUT_MS: '15000',
    });
    t.teardown(() => again.stop());
    await receiver.waitFor(
      () => {
        const now = countsOf(receiver);
        return [...originals.keys()].every((x) => (now.get(x) ?? 0) > (before.get(x) ?? 0));
      },
      'every message of the replay after the restart',
      120_000,
    );

    const after = monitorApi(again.url, key);
    t.equal(await pendingLeft(after, webhookId), 0, 'nothing left pending');
    const now = countsOf(receiver);
    const sent = (x: string) => (now.get(x) ?? 0) - (before.get(x) ?? 0);
    const list = (await after.call('GET', `/webhooks/${webhookId}/deliveries?limit=1000`)).json.deliveries as Array<{
      message_id: string;
      replay_id: string | null;
      status: string;
      attempts: Array<{ attempt: number; status_code: number | null }>;
    }>;
    const replayedList = list.filter((d) => d.replay_id === replay.json.replay_id);
    t.equal(replayedList.length, MESSAGES, 'the replay lists one delivery a message');
    t.equal(new Set(replayedList.map((d) => d.message_id)).size, MESSAGES, 'each message once');
    t.ok(
      replayedList.every((d) => d.status === 'delivered'),
      'each delivered',
    );
    t.same(
      [...originals.keys()].filter((x) => sent(x) > 2),
      [],
      'no message sent more than twice',
    );
    // at least once: a message is sent twice only when the kill cut its attempt short (claimed, sent or held open,
    // its outcome never recorded), which the restarted service claims again as attempt 2
    const cut = new Set(
      replayedList.filter((d) => d.attempts.length === 1 && d.attempts[0]!.attempt === 2).map((d) => d.message_id),
    );
    const twice = [...originals.keys()].filter((x) => sent(x) === 2);
    t.same(
      twice.filter((x) => !cut.has(x)),
      [],
      `sent twice: ${twice.length}, each an attempt the kill cut short (${cut.size}; ${inFlightAtKill} held open)`,
    );
    t.ok(inFlightAtKill > 0 && cut.size >= inFlightAtKill, 'the attempts held open at the kill were sent again');
    const bodies = receiver.received.filter((r) => originals.has(String(r.headers['webhook-id'])));
    t.notOk(
      bodies.some((r) => !r.payload || r.body !== originals.get(String(r.headers['webhook-id']))),
      'every arrival verifies and is the original body',
    );
  },
);
