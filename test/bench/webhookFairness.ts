/**
 * Webhook deliveries shared between keys (docs/webhooks.md#fair-share): does a key whose receivers hang delay
 * another key's deliveries?
 *
 *   node --import tsx test/bench/webhookFairness.ts [--rounds 2] [--hanging 10] [--searches 60] [--healthy 50]
 *     [--timeout-ms 10000] [--concurrency 64]
 *
 * Key A has `--hanging` endpoints whose receiver takes the connection and never answers (each attempt holds its slot
 * until the timeout, 10 s as the service's default); `--searches` messages go to each of them at once (600 attempts:
 * what 60 cached searches, free, cost A). Key B has one healthy endpoint, answering 204 at once, and is sent
 * `--healthy` messages, one every 200 ms from the same moment. Measured: B's scheduled → first-attempt arrival
 * (p50, p99, max). Both sides are the same deliverer in this one process, with the same sender, receiver and
 * timeout, each round on a fresh embedded store:
 * - fair: the deliverer as shipped (fair queue between keys, AIMD cap per endpoint, a key under its share may start
 *   when every slot is taken);
 * - fcfs: the same attempts (services/webhooks/workers/attempt.ts) from one first-come, first-served pool of `--concurrency`
 *   slots (what the deliverer was before; test/bench/webhookFcfs.ts).
 * Sides alternate per round. A failure is a B message not delivered within the round (2 minutes after its last
 * one); no ratio when a side had one. It asserts nothing.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { streams } from '../../contracts/events.js';
import { deliveryDecider } from '../../domain/webhook/delivery.js';
import { deliveryIdOf, messageIdOf } from '../../domain/webhook/ids.js';
import { composeApplication } from '../../services/compose/application.js';
import { openCore } from '../../services/compose/embedded/core.js';
import { loadConfig } from '../../services/config/config.js';
import { systemResolver } from '../../services/webhooks/commands/webhookSafety.js';
import { createWebhookService } from '../../services/webhooks/commands/webhooks.js';
import { createDeliverer } from '../../services/webhooks/workers/deliverer.js';
import { createSender } from '../../services/webhooks/workers/sender.js';
import { removeDir, tempDataDir } from '../support/service.js';
import { alternate, type Figure, numberArg, printRatio, quantile } from './compare.js';
import { createFcfsDeliverer } from './webhookFcfs.js';

const ROUNDS = numberArg('rounds', 2);
const HANGING = numberArg('hanging', 10);
const SEARCHES = numberArg('searches', 60);
const HEALTHY = numberArg('healthy', 50);
const TIMEOUT_MS = numberArg('timeout-ms', 10_000);
const CONCURRENCY = numberArg('concurrency', 64);
const HEALTHY_GAP_MS = 200;

/**
 * Two receivers on 127.0.0.1, as two customers' hosts are two origins (the sender keeps a socket pool per origin):
 * A's takes every request and never answers (closed at a round's end), B's answers 204 and notes each webhook-id's
 * first arrival.
 */
const arrivals = new Map<string, number>();
const hanging = new Set<ServerResponse>();
const hangServer = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    hanging.add(res);
    res.on('close', () => hanging.delete(res));
  });
});
const okServer = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const id = String(req.headers['webhook-id']);
    if (!arrivals.has(id)) arrivals.set(id, Date.now());
    res.writeHead(204).end();
  });
});
const listen = async (server: typeof okServer) => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};
const hangOrigin = await listen(hangServer);
const okOrigin = await listen(okServer);
const safety = { allowHttp: true, allowPrivate: true };

interface RoundResult {
  latencies: number[];
  missing: number;
  aAttempts: number;
}

const side =
  (fairShare: boolean) =>
  async (round: number): Promise<RoundResult> => {
    const dataDir = tempDataDir('bench-webhook-fairness');
    const config = loadConfig({}, { dataDir });
    const core = await openCore(config);
    const { keys } = composeApplication(core, config);
    const projected = (p: number) => core.projector.waitFor(p);
    const service = createWebhookService({
      queries: core.queries,
      handle: core.handle,
      projected,
      pepper: core.secrets.keyPepper,
      safety,
      resolve: systemResolver,
    });
    const keyOf = async () => {
      const { keyId } = await keys.create({ tier: 'pro', label: 'bench' });
      await projected(await core.eventStore.headPosition());
      return core.queries.keys.byId(keyId)!;
    };
    const [a, b] = [await keyOf(), await keyOf()];
    const aHooks: Array<{ webhook_id: string }> = [];
    for (let i = 0; i < HANGING; i++) {
      aHooks.push(await service.create(a, { url: `${hangOrigin}/hang/${i}`, events: ['search.completed'] }));
    }
    const bHook = await service.create(b, { url: `${okOrigin}/ok`, events: ['search.completed'] });
    const sender = createSender({ ...safety, resolve: systemResolver, timeoutMs: TIMEOUT_MS, maxSockets: CONCURRENCY });
    let aAttempts = 0;
    const deliverer = (fairShare ? createDeliverer : createFcfsDeliverer)({
      eventStore: core.eventStore,
      queries: core.queries,
      handle: core.handle,
      projected,
      sender,
      pepper: core.secrets.keyPepper,
      config: {
        backoffMs: 5_000,
        timeoutMs: TIMEOUT_MS,
        concurrency: CONCURRENCY,
        tickMs: 100,
        giveUpAfterMs: 86_400_000,
      },
      worker: `bench-${randomBytes(3).toString('hex')}`,
      onAttempt: (x) => {
        if (x.outcome !== 'delivered') aAttempts++;
      },
    });
    deliverer.start();
    const scheduled = new Map<string, number>();
    /** schedules one message to one endpoint, as the router does (recorded, then handed to the deliverer) */
    const schedule = async (webhookId: string, keyId: string, tag: string) => {
      const messageId = messageIdOf('fairness', String(round), tag, randomBytes(4).toString('hex'));
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
      for (const e of res.events) if (e.type === 'WebhookDeliveryScheduled') deliverer.remember(e.data);
      deliverer.kick();
      return messageId;
    };
    // A's burst: every search's message to each of its hanging endpoints, at once
    await Promise.all(
      Array.from({ length: SEARCHES }, (_, s) =>
        Promise.all(aHooks.map((h) => schedule(h.webhook_id, a.keyId, `a-${s}`))),
      ),
    );
    // B's messages, one every 200 ms from the same moment
    for (let i = 0; i < HEALTHY; i++) {
      const messageId = await schedule(bHook.webhook_id, b.keyId, `b-${i}`);
      scheduled.set(messageId, Date.now());
      await new Promise((r) => setTimeout(r, HEALTHY_GAP_MS));
    }
    const deadline = Date.now() + 120_000;
    while ([...scheduled.keys()].some((id) => !arrivals.has(id)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const latencies = [...scheduled].flatMap(([id, at]) => {
      const got = arrivals.get(id);
      return got === undefined ? [] : [got - at];
    });
    for (const res of hanging) res.destroy();
    await deliverer.stop();
    sender.close();
    await core.close();
    removeDir(dataDir);
    return { latencies, missing: scheduled.size - latencies.length, aAttempts };
  };

console.log(
  `# webhook fairness: key A ${HANGING} hanging endpoints × ${SEARCHES} messages at once, key B 1 healthy endpoint × ${HEALTHY} messages (one per ${HEALTHY_GAP_MS} ms); timeout ${TIMEOUT_MS} ms, ${CONCURRENCY} slots; ${ROUNDS} rounds, sides alternated`,
);
const describe = (r: RoundResult) =>
  `B p50 ${quantile(r.latencies, 0.5)} ms, p99 ${quantile(r.latencies, 0.99)} ms, max ${Math.max(0, ...r.latencies)} ms, ${r.missing} missing; A attempts ended ${r.aAttempts}`;
const results = await alternate(ROUNDS, { fair: side(true), fcfs: side(false) }, (round, r) => {
  console.log(`round ${round + 1} fair: ${describe(r.fair)}`);
  console.log(`round ${round + 1} fcfs: ${describe(r.fcfs)}`);
});
const p99Of = (rs: RoundResult[]): Figure => ({
  value: quantile(
    rs.flatMap((r) => r.latencies),
    0.99,
  ),
  failures: rs.reduce((n, r) => n + r.missing, 0),
});
const fair = p99Of(results.fair);
const fcfs = p99Of(results.fcfs);
console.log(`B first-attempt p99 over all rounds: fair ${fair.value} ms, fcfs ${fcfs.value} ms`);
printRatio('B first-attempt p99, fcfs / fair', fcfs, fair, ['fcfs', 'fair']);
hangServer.close();
okServer.close();
