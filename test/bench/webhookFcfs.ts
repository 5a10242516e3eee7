/**
 * The baseline test/bench/webhookFairness.ts measures the deliverer against: the same attempts
 * (services/webhooks/workers/attempt.ts: claimed, signed, POSTed, recorded, by the same sender) taken from one first-come,
 * first-served pool of `concurrency` slots, with no share per key, no cap per endpoint and no narrowing while the
 * thread is busy: what the deliverer was before fair share (docs/webhooks.md#fair-share). Kept here, not in the
 * service, as test/bench/fairQueueLinear.ts keeps the queue the fair queue replaced. Deliveries come from `remember`
 * (as the router tells them) and from the outbox, read at each tick when something comes due and at least every
 * second (the retries).
 */
import type { OutboxDoc } from '../../projections/webhooks/webhooks.js';
import {
  type AttemptConfig,
  type AttemptDeps,
  createAttempts,
  type Scheduled,
} from '../../services/webhooks/workers/attempt.js';

export const createFcfsDeliverer = (
  deps: AttemptDeps & { config: AttemptConfig & { concurrency: number; tickMs: number } },
) => {
  const { config, queries } = deps;
  const clock = () => deps.now?.() ?? new Date();
  const attempts = createAttempts(deps, { maxBodies: 10_000 });
  const waiting: OutboxDoc[] = [];
  let head = 0;
  const held = new Set<string>();
  const inFlight = new Set<string>();
  const running = new Set<Promise<unknown>>();
  let stopped = false;
  let nextDue = 0;
  let lookedAt = 0;
  let timer: NodeJS.Timeout | undefined;

  const pump = () => {
    while (!stopped && inFlight.size < config.concurrency && head < waiting.length) {
      const d = waiting[head++]!;
      held.delete(d.deliveryId);
      if (inFlight.has(d.deliveryId)) continue;
      inFlight.add(d.deliveryId);
      const p = attempts
        .attempt(d)
        .catch(() => undefined)
        .finally(() => {
          inFlight.delete(d.deliveryId);
          running.delete(p);
          setImmediate(pump);
        });
      running.add(p);
    }
    if (head > 1_024 && head * 2 > waiting.length) {
      waiting.splice(0, head);
      head = 0;
    }
  };

  const hold = (d: OutboxDoc) => {
    if (held.has(d.deliveryId) || inFlight.has(d.deliveryId) || attempts.unprojected(d.deliveryId)) return;
    held.add(d.deliveryId);
    waiting.push(d);
  };

  const look = () => {
    const at = clock().getTime();
    lookedAt = at;
    nextDue = Number.POSITIVE_INFINITY;
    const ready: OutboxDoc[] = [];
    for (const d of queries.webhooks.outbox()) {
      if (attempts.unprojected(d.deliveryId) || inFlight.has(d.deliveryId)) continue;
      if (attempts.claimable(d, at)) ready.push(d);
      else nextDue = Math.min(nextDue, Math.max(d.due, d.leaseUntil ?? 0));
    }
    for (const d of ready.sort((a, b) => a.due - b.due)) hold(d);
    pump();
  };

  return {
    kick: () => setImmediate(pump),
    remember(s: Scheduled) {
      attempts.keep(s);
      hold({
        deliveryId: s.deliveryId,
        webhookId: s.webhookId,
        keyId: s.keyId,
        eventType: s.eventType,
        scheduledAt: s.scheduledAt,
        due: Date.parse(s.scheduledAt),
      });
    },
    start() {
      timer = setInterval(() => {
        const at = clock().getTime();
        if (at >= nextDue || at - lookedAt >= 1_000) look();
      }, config.tickMs);
      timer.unref();
      look();
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await Promise.allSettled([...running]);
    },
  };
};
