/**
 * Webhook deliveries: what the durable outbox costs (docs/webhooks.md).
 *
 *   node --import tsx test/bench/webhooks.ts [--messages 1000] [--rounds 2]
 *
 * Both sides send the same N messages, signed with the same secret (Standard Webhooks), through the same sender (the
 * SSRF-checked POST with its keep-alive pool, 64 sockets) to the same receiver on 127.0.0.1, in this one process:
 * - outbox: each message scheduled as a delivery event in the embedded event log (SQLite), then the deliverer claims
 *   each attempt on its stream, POSTs it and records the outcome (three appends and the projection of each), as the
 *   service does;
 * - direct: sign and POST each message, 64 at once, recording nothing (what a sender without an outbox does, and
 *   what loses a message when its process dies).
 * Sides alternate per round. It prints deliveries per second per side, the outbox's scheduled-to-delivered p50/p99,
 * and the ratio; no ratio when a side failed a delivery. It asserts nothing.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { streams } from '../../contracts/events.js';
import { deliveryDecider } from '../../domain/webhook/delivery.js';
import { deliveryIdOf, messageIdOf } from '../../domain/webhook/ids.js';
import { composeApplication } from '../../services/compose/application.js';
import { openCore } from '../../services/compose/embedded/core.js';
import { loadConfig } from '../../services/config/config.js';
import { systemResolver } from '../../services/webhooks/commands/webhookSafety.js';
import { secretsOf, signedHeaders } from '../../services/webhooks/commands/webhookSigning.js';
import { createWebhookService } from '../../services/webhooks/commands/webhooks.js';
import { createDeliverer } from '../../services/webhooks/workers/deliverer.js';
import { createSender } from '../../services/webhooks/workers/sender.js';
import { removeDir, tempDataDir } from '../support/service.js';
import { numberArg } from './compare.js';

const N = numberArg('messages', 1000);
const ROUNDS = numberArg('rounds', 2);
const CONCURRENCY = 64;

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
};

let received = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    received++;
    res.writeHead(204).end();
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const dataDir = tempDataDir('bench-webhooks');
const config = loadConfig({}, { dataDir });
const core = await openCore(config);
const { keyId } = await composeApplication(core, config).keys.create({ tier: 'pro', label: 'bench' });
await core.projector.waitFor(await core.eventStore.headPosition());
const key = core.queries.keys.byId(keyId)!;
const projected = (p: number) => core.projector.waitFor(p);
const safety = { allowHttp: true, allowPrivate: true };
const service = createWebhookService({
  queries: core.queries,
  handle: core.handle,
  projected,
  pepper: core.secrets.keyPepper,
  safety,
  resolve: systemResolver,
});
const hook = await service.create(key, { url, events: ['search.completed'] });
const doc = core.queries.webhooks.byId(hook.webhook_id)!;
const sender = createSender({ ...safety, resolve: systemResolver, timeoutMs: 10_000, maxSockets: CONCURRENCY });

const bodyOf = (i: number, round: number) =>
  JSON.stringify({
    type: 'search.completed',
    timestamp: new Date().toISOString(),
    data: { job_id: `${round}-${i}`, status: 'done', keyword: `bench ${i}`, organic_results_count: 100 },
  });

/** the outbox: schedule N deliveries, then wait until the deliverer has delivered them all */
const outbox = async (round: number) => {
  const scheduledAt = new Map<string, number>();
  const latencies: number[] = [];
  let delivered = 0;
  let failed = 0;
  let done: () => void = () => undefined;
  const all = new Promise<void>((r) => {
    done = r;
  });
  const deliverer = createDeliverer({
    eventStore: core.eventStore,
    queries: core.queries,
    handle: core.handle,
    projected,
    sender,
    pepper: core.secrets.keyPepper,
    config: { backoffMs: 5000, timeoutMs: 10_000, concurrency: CONCURRENCY, tickMs: 100, giveUpAfterMs: 86_400_000 },
    worker: `bench-${randomBytes(3).toString('hex')}`,
    onAttempt: (a) => {
      if (a.outcome === 'delivered') delivered++;
      else failed++;
      if (delivered + failed >= N) done();
    },
  });
  deliverer.start();
  const t0 = performance.now();
  let last = 0;
  const batch: Array<Promise<void>> = [];
  for (let i = 0; i < N; i++) {
    const messageId = messageIdOf('bench', String(round), String(i), randomBytes(4).toString('hex'));
    const deliveryId = deliveryIdOf(doc.webhookId, messageId, Date.now());
    batch.push(
      core
        .handle(streams.webhookDelivery(deliveryId), deliveryDecider, {
          type: 'ScheduleDelivery',
          delivery: {
            deliveryId,
            webhookId: doc.webhookId,
            keyId,
            messageId,
            eventType: 'search.completed',
            body: bodyOf(i, round),
            occurredAt: new Date().toISOString(),
            scheduledAt: new Date().toISOString(),
          },
        })
        .then(async (res) => {
          scheduledAt.set(deliveryId, Date.now());
          last = Math.max(last, res.position ?? 0);
          for (const e of res.events) if (e.type === 'WebhookDeliveryScheduled') deliverer.remember(e.data);
        }),
    );
    if (batch.length >= 100) {
      await Promise.all(batch.splice(0));
      await projected(last);
      deliverer.kick();
    }
  }
  await Promise.all(batch);
  await projected(last);
  deliverer.kick();
  await all;
  const ms = performance.now() - t0;
  await deliverer.stop();
  for (const d of core.queries.webhooks.deliveriesOf(doc.webhookId)) {
    const at = scheduledAt.get(d.deliveryId);
    if (at !== undefined && d.deliveredAt) latencies.push(Date.parse(d.deliveredAt) - at);
  }
  return { ms, delivered, failed, latencies };
};

/** direct: sign and POST each message, CONCURRENCY at once, recording nothing */
const direct = async (round: number) => {
  const secrets = secretsOf(core.secrets.keyPepper, doc, new Date());
  let delivered = 0;
  let failed = 0;
  let next = 0;
  const t0 = performance.now();
  const lane = async () => {
    for (let i = next++; i < N; i = next++) {
      const body = bodyOf(i, round);
      const messageId = messageIdOf('direct', String(round), String(i));
      const out = await sender.send(url, signedHeaders(secrets, messageId, new Date(), body), body);
      if (out.statusCode !== undefined && out.statusCode >= 200 && out.statusCode < 300) delivered++;
      else failed++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  return { ms: performance.now() - t0, delivered, failed };
};

console.log(
  `# webhooks: ${N} messages per side per round, ${ROUNDS} rounds, sides alternated, ${CONCURRENCY} in flight`,
);
const rates = { outbox: [] as number[], direct: [] as number[] };
let failures = 0;
const outboxLatencies: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? (['outbox', 'direct'] as const) : (['direct', 'outbox'] as const);
  for (const side of order) {
    const r: { ms: number; delivered: number; failed: number; latencies?: number[] } =
      side === 'outbox' ? await outbox(round) : await direct(round);
    const rate = (r.delivered / r.ms) * 1000;
    rates[side].push(rate);
    failures += r.failed;
    outboxLatencies.push(...(r.latencies ?? []));
    console.log(
      `round ${round + 1} ${side.padEnd(6)}: ${r.delivered}/${N} delivered, ${r.failed} failed, ${Math.round(r.ms)} ms, ${rate.toFixed(0)} deliveries/s`,
    );
  }
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
console.log(
  `outbox: scheduled → delivered p50 ${quantile(outboxLatencies, 0.5).toFixed(0)} ms, p99 ${quantile(outboxLatencies, 0.99).toFixed(0)} ms (${outboxLatencies.length} deliveries; includes the queue of ${N} scheduled at once)`,
);
console.log(`receiver got ${received} requests`);
if (failures > 0) console.log(`no ratio: ${failures} deliveries failed`);
else {
  console.log(
    `ratio: the outbox delivers at ${(median(rates.outbox) / median(rates.direct)).toFixed(2)}× the direct sender's rate (median ${median(rates.outbox).toFixed(0)} vs ${median(rates.direct).toFixed(0)} deliveries/s): the price of durability`,
  );
}
sender.close();
await core.close();
receiver.close();
removeDir(dataDir);
