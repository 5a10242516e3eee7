import { randomBytes } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { streams } from '../../../contracts/events.js';
import { deliveryDecider } from '../../../domain/webhook/delivery.js';
import { deliveryIdOf, messageIdOf } from '../../../domain/webhook/ids.js';
import { createDeliverer } from '../../../services/webhooks/workers/deliverer.js';
import { openWebhookCore } from '../../support/webhookCore.js';

/**
 * Deliveries are shared fairly between keys (docs/webhooks.md#fair-share): a key whose ten receivers take every
 * connection and never answer holds no slot another key needs, and each of its endpoints is soon held to one attempt
 * at a time. Before, one first-come, first-served pool of 64 made the other key's deliveries wait for the hung
 * attempts' timeouts, wave after wave. Receivers on 127.0.0.1, one origin each (as two customers' hosts are).
 */
const TIMEOUT_MS = 4_000;

const listen = async (server: Server) => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

t.test("deliverer › a key's hanging receivers do not delay another key's deliveries", async (t) => {
  const hanging = new Set<ServerResponse>();
  const hangServer = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
    });
  });
  const arrivals = new Map<string, number>();
  const okServer = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrivals.set(String(req.headers['webhook-id']), Date.now());
      res.writeHead(204).end();
    });
  });
  const [hangOrigin, okOrigin] = [await listen(hangServer), await listen(okServer)];
  t.teardown(() => {
    for (const res of hanging) res.destroy();
    hangServer.close();
    okServer.close();
  });
  const {
    core,
    sender,
    service,
    projected,
    mintKey,
    deliverer: hand,
  } = await openWebhookCore(t, {
    name: 'serp-fairshare',
    timeoutMs: TIMEOUT_MS,
    maxSockets: 64,
  });
  const keyOf = () => mintKey('fair');
  const [a, b] = [await keyOf(), await keyOf()];
  const aHooks: string[] = [];
  for (let i = 0; i < 10; i++) {
    aHooks.push((await service.create(a, { url: `${hangOrigin}/hang/${i}`, events: ['search.completed'] })).webhook_id);
  }
  const bHook = (await service.create(b, { url: `${okOrigin}/ok`, events: ['search.completed'] })).webhook_id;
  const deliverer = createDeliverer({
    eventStore: core.eventStore,
    queries: core.queries,
    handle: core.handle,
    projected,
    sender,
    pepper: core.secrets.keyPepper,
    config: { backoffMs: 60_000, timeoutMs: TIMEOUT_MS, concurrency: 64, tickMs: 100, giveUpAfterMs: 86_400_000 },
    worker: `test-${randomBytes(3).toString('hex')}`,
  });
  hand.set(deliverer);
  deliverer.start();
  const schedule = async (webhookId: string, keyId: string, tag: string) => {
    const messageId = messageIdOf('fair', tag, randomBytes(4).toString('hex'));
    const deliveryId = deliveryIdOf(webhookId, messageId, Date.now());
    const at = new Date().toISOString();
    const res = await core.handle(streams.webhookDelivery(deliveryId), deliveryDecider, {
      type: 'ScheduleDelivery',
      delivery: {
        deliveryId,
        webhookId,
        keyId,
        messageId,
        eventType: 'search.completed',
        body: JSON.stringify({ type: 'search.completed', timestamp: at, data: { tag } }),
        occurredAt: at,
        scheduledAt: at,
      },
    });
    for (const e of res.events) if (e.type === 'WebhookDeliveryScheduled') deliverer!.remember(e.data);
    deliverer!.kick();
    return messageId;
  };
  // A: 30 messages to each of its 10 hanging endpoints at once (300 attempts; the pool has 64 slots)
  await Promise.all(
    Array.from({ length: 30 }, (_, s) => Promise.all(aHooks.map((h) => schedule(h, a.keyId, `a-${s}`)))),
  );
  // B: one message every 250 ms for 2.5 timeouts, each timed from its scheduling to its arrival
  const sent = new Map<string, number>();
  const until = Date.now() + TIMEOUT_MS * 2.5;
  while (Date.now() < until) {
    const id = await schedule(bHook, b.keyId, 'b');
    sent.set(id, Date.now());
    await new Promise((r) => setTimeout(r, 250));
  }
  const deadline = Date.now() + TIMEOUT_MS * 20;
  while ([...sent.keys()].some((id) => !arrivals.has(id)) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const latencies = [...sent].map(([id, at]) => (arrivals.get(id) ?? Number.POSITIVE_INFINITY) - at);
  const worst = Math.max(...latencies);
  t.equal(latencies.filter(Number.isFinite).length, sent.size, `B's ${sent.size} messages all arrived`);
  // the goal is 1 s at p99; on a loaded machine the bound here is half the timeout: never behind a hung attempt
  t.ok(worst < TIMEOUT_MS / 2, `B's slowest first attempt took ${worst} ms (a hung attempt holds ${TIMEOUT_MS} ms)`);
  t.same(
    aHooks.map((h) => deliverer!.capOf(h)),
    aHooks.map(() => 1),
    'after their timeouts, each hanging endpoint is held to one attempt at a time',
  );
});

t.test('deliverer › an outbox read older than its own claims queues nothing again', async (t) => {
  const arrivals = new Map<string, number>();
  const okServer = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      arrivals.set(id, (arrivals.get(id) ?? 0) + 1);
      res.writeHead(204).end();
    });
  });
  const origin = await listen(okServer);
  let openGate: () => void = () => undefined;
  const gate = new Promise<void>((r) => {
    openGate = r;
  });
  t.teardown(() => {
    openGate();
    okServer.close();
  });
  const {
    core,
    sender,
    service,
    projected,
    mintKey,
    deliverer: hand,
  } = await openWebhookCore(t, {
    name: 'serp-own-claims',
    timeoutMs: 4_000,
    maxSockets: 64,
  });
  const key = await mintKey('own claims');
  const keyId = key.keyId;
  const hook = (await service.create(key, { url: `${origin}/ok`, events: ['search.completed'] })).webhook_id;
  const N = 20;
  for (let i = 0; i < N; i++) {
    const messageId = messageIdOf('own', String(i), randomBytes(4).toString('hex'));
    const deliveryId = deliveryIdOf(hook, messageId, Date.now());
    const at = new Date().toISOString();
    await core.handle(streams.webhookDelivery(deliveryId), deliveryDecider, {
      type: 'ScheduleDelivery',
      delivery: {
        deliveryId,
        webhookId: hook,
        keyId,
        messageId,
        eventType: 'search.completed',
        body: JSON.stringify({ type: 'search.completed', timestamp: at, data: { i } }),
        occurredAt: at,
        scheduledAt: at,
      },
    });
  }
  await projected(await core.eventStore.headPosition());
  // the outbox as it stood before any claim: every read answers it, as a read model far behind the log would
  const stale = core.queries.webhooks.outbox();
  t.equal(stale.length, N, `${N} deliveries due`);
  let reads = 0;
  const outbox = () => {
    reads++;
    return stale;
  };
  const queries = { ...core.queries, webhooks: { ...core.queries.webhooks, outbox } };
  let claims = 0;
  const handle: typeof core.handle = (stream, decider, command) => {
    if ((command as { type: string }).type === 'ClaimAttempt') claims++;
    return core.handle(stream, decider, command);
  };
  const deliverer = createDeliverer({
    eventStore: core.eventStore,
    queries,
    handle,
    // the read models hold none of its appends until the gate opens
    projected: (p) => gate.then(() => projected(p)),
    sender,
    pepper: core.secrets.keyPepper,
    config: { backoffMs: 60_000, timeoutMs: 4_000, concurrency: 64, tickMs: 20, giveUpAfterMs: 86_400_000 },
    worker: `test-${randomBytes(3).toString('hex')}`,
  });
  hand.set(deliverer);
  deliverer.start();
  const deadline = Date.now() + 30_000;
  while (arrivals.size < N && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.equal(arrivals.size, N, 'every delivery arrived');
  // three more reads of the stale outbox after the last attempt ended
  const after = reads;
  while (reads < after + 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.ok(reads >= after + 3, `the outbox was read ${reads - after} times after the last arrival`);
  t.equal(claims, N, `one claim a delivery (${claims} for ${N}): none queued again from the stale reads`);
  t.same([...new Set(arrivals.values())], [1], 'each arrived once');
});
