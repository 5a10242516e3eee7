import { type EventOf, streams } from '../../../contracts/events.js';
import { deliveryDecider } from '../../../domain/webhook/delivery.js';
import { deliveryIdOf } from '../../../domain/webhook/ids.js';
import { type WebhookDoc, webhookEvents } from '../../../projections/webhooks/webhooks.js';
import type { FollowerDeps } from '../../application/followerDeps.js';
import { createReactor, type EventType, type LogEvent, reactorDeps } from '../../reactor/reactor.js';
import { messagesOf, SOURCE_TYPES } from './eventTypes.js';
import { bodyOf, createResultSummaries, type Message, type ResultSummaries } from './messages.js';
import { createQuotaTracker } from './quota.js';
import { createReplayer, replayBatch, takes } from './replay.js';

/**
 * What makes a message (every webhook event type's sources, services/webhooks/workers/eventTypes.ts), or a replay; and what
 * changes what the router keeps (results, endpoints).
 */
const HANDLES: EventType[] = [
  ...SOURCE_TYPES,
  'WebhookReplayRequested',
  'SearchReparsed',
  'SearchPurged',
  ...(webhookEvents as ReadonlySet<EventType>),
];

const wanted = (e: { type: EventType }) => SOURCE_TYPES.has(e.type) || e.type === 'WebhookReplayRequested';

/**
 * Turns the log into deliveries (docs/webhooks.md): it follows the log from a checkpoint of its own, and for each event
 * that makes a message (a finished search, a completed run, an alert, a quota line crossed) schedules one delivery
 * per endpoint of the key that takes it, on a stream whose id is derived from the endpoint and the event: a second
 * worker, or a batch handed over again after a crash, schedules nothing twice. A replay request sends again, from the
 * log, every message of the endpoint's types since its `since`: recorded as one event that refers to them
 * (docs/webhooks.md#replay-recorded-by-reference), its deliveries found by the deliverer in the outbox's query.
 */
export const createWebhookRouter = (
  deps: FollowerDeps & {
    /** the origin links in `data` are built on (SERP_PUBLIC_BASE_URL); empty: paths */
    baseUrl: string;
    /** told of the deliveries scheduled as soon as they are recorded (the deliverer attempts them at once) */
    onScheduled?: (deliveries: Array<EventOf<'WebhookDeliveryScheduled'>['data']>) => void;
    /** what messages tell of results, shared with the deliverer's replayed messages (forgotten here on a reparse) */
    summaries?: ResultSummaries;
  },
) => {
  const { queries, handle, eventStore } = deps;
  const now = () => deps.now?.() ?? new Date();
  const usage = createQuotaTracker(eventStore);
  const summaries = deps.summaries ?? createResultSummaries(queries);
  let fresh: Array<EventOf<'WebhookDeliveryScheduled'>['data']> = [];

  const schedule = async (m: Message, w: WebhookDoc, atMs: number) => {
    const deliveryId = deliveryIdOf(w.webhookId, m.messageId, atMs);
    const res = await handle(streams.webhookDelivery(deliveryId), deliveryDecider, {
      type: 'ScheduleDelivery',
      delivery: {
        deliveryId,
        webhookId: w.webhookId,
        keyId: w.keyId,
        messageId: m.messageId,
        eventType: m.type,
        body: bodyOf(m),
        occurredAt: m.occurredAt,
        scheduledAt: now().toISOString(),
      },
    });
    for (const x of res.events) if (x.type === 'WebhookDeliveryScheduled') fresh.push(x.data);
    return res.position ?? 0;
  };

  /**
   * The key's endpoints, kept from batch to batch: the webhooks view changes only with the events it projects, which
   * pass through here in the log's order, so the first batch that holds one drops them all. Without it each search
   * asked the view once (its quota reservation).
   */
  const endpoints = new Map<string, WebhookDoc[]>();
  const endpointsOf = (keyId: string) => {
    let found = endpoints.get(keyId);
    if (found === undefined) {
      if (endpoints.size >= 10_000) endpoints.clear();
      found = queries.webhooks.ofKey(keyId);
      endpoints.set(keyId, found);
    }
    return found;
  };

  /** whether an endpoint of the key takes messages of this type (live routing) */
  const anyTakes = (keyId: string, type: Message['type'], monitorId?: string) =>
    endpointsOf(keyId).some((w) => takes(w, { type, keyId, monitorId } as Message));

  const replay = createReplayer({
    eventStore,
    queries,
    baseUrl: deps.baseUrl,
    summaries,
    handle,
    now,
    projected: deps.projected,
    log: deps.log,
  });

  const handleBatch = async (batch: LogEvent[], last: number) => {
    // a result reparsed or purged is read again for the next message that tells of it; an endpoint's change is seen
    for (const e of batch) {
      if (e.type === 'SearchReparsed' || e.type === 'SearchPurged') summaries.forget(e.data.jobId);
      else if (webhookEvents.has(e.type)) endpoints.clear();
    }
    const relevant = batch.filter(wanted);
    if (relevant.length === 0) return;
    let lastScheduled = 0;
    await deps.projected(last);
    const scheduled: Array<Promise<number>> = [];
    const replays = relevant.filter((e) => e.type === 'WebhookReplayRequested');
    const shared = replays.length > 1 ? replayBatch(queries, replays) : undefined;
    for (const e of relevant) {
      // an event that names its key (a quota line, a monitor's run or alert) makes nothing for a key without an
      // endpoint: most keys have none, and most events are their quota reservations
      const named = (e.data as { keyId?: unknown }).keyId;
      if (typeof named === 'string' && endpointsOf(named).length === 0) continue;
      if (e.type === 'WebhookReplayRequested') {
        lastScheduled = Math.max(lastScheduled, await replay(e, shared));
        continue;
      }
      const messages = await messagesOf(e, {
        queries,
        baseUrl: deps.baseUrl,
        summaries,
        usage,
        interested: anyTakes,
      });
      if (messages.length === 0) continue;
      for (const m of messages) {
        for (const w of endpointsOf(m.keyId)) {
          if (w.createdPosition < e.globalPosition && takes(w, m)) {
            scheduled.push(schedule(m, w, Date.parse(e.recordedAt)));
          }
        }
      }
    }
    for (const p of await Promise.all(scheduled)) lastScheduled = Math.max(lastScheduled, p);
    if (fresh.length > 0) {
      // told at once: the deliverer attempts them from what it is told (each claim is decided on the delivery's
      // own stream), so the first attempt does not wait for the outbox projection
      const told = fresh;
      fresh = [];
      deps.onScheduled?.(told);
    }
    if (lastScheduled > 0) await deps.projected(lastScheduled);
  };

  // a batch handed over again after a crash schedules nothing twice (the deliveries' ids are derived)
  return createReactor(
    {
      name: 'webhook-router',
      handles: HANDLES,
      handle: (events, { last }) => handleBatch(events, last),
    },
    reactorDeps(deps),
  );
};
