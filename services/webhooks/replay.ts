import type { EventOf } from '../../contracts/events.js';
import { REPLAY_MAX_MESSAGES } from '../../contracts/webhooks.js';
import type { ReadModelQueries } from '../../projections/index.js';
import type { WebhookDoc } from '../../projections/webhooks/webhooks.js';
import type { EventStore } from '../ports/eventStore.js';
import { type LogEvent, logEventOf } from '../reactor/reactor.js';
import { messagesOf, SOURCE_TYPES } from './eventTypes.js';
import type { Message, ResultSummaries } from './messages.js';
import { createQuotaTracker } from './quota.js';

/** the event types that can become a message (services/webhooks/eventTypes.ts): the ones a replay reads again */
const replayable = (e: { type: string }) => (SOURCE_TYPES as ReadonlySet<string>).has(e.type);

/** whether `w` takes `m`: its key, one of its types, its monitors (monitor.* events) and not disabled */
export const takes = (w: WebhookDoc, m: Message) =>
  w.keyId === m.keyId &&
  !w.disabled &&
  w.events.includes(m.type) &&
  (!m.type.startsWith('monitor.') ||
    !w.monitorIds ||
    (m.monitorId !== undefined && w.monitorIds.includes(m.monitorId)));

/**
 * A replay (docs/webhooks.md#replay-bounded): every message of the endpoint's types recorded from
 * `since` up to the request, read again from the log and scheduled as new deliveries with their original
 * `webhook-id`. The router hands it each `WebhookReplayRequested`; `schedule` records one delivery and answers the
 * position it was recorded at.
 */
export const createReplayer = (deps: {
  eventStore: EventStore;
  queries: ReadModelQueries;
  baseUrl: string;
  summaries: ResultSummaries;
  schedule(m: Message, w: WebhookDoc, atMs: number, replayId?: string): Promise<number>;
  /** resolves once the read models hold `position` */
  projected(position: number): Promise<unknown>;
  maxMessages?: number;
  log?: (msg: string, fields: Record<string, unknown>) => void;
}) => {
  const { eventStore, queries } = deps;
  const maxMessages = deps.maxMessages ?? REPLAY_MAX_MESSAGES;
  /** the last delivery this replayer scheduled: the next replay reads the deliveries once they hold it */
  let lastScheduled = 0;

  /** the first position whose event was recorded at or after `since` (binary search over the log) */
  const positionAt = async (sinceMs: number, before: number) => {
    let lo = 0;
    let hi = before;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const [e] = await eventStore.readAll({ fromPosition: mid, maxCount: 1 });
      if (!e || Date.parse(e.metadata.recordedAt) >= sinceMs) hi = mid;
      else lo = e.globalPosition;
    }
    return lo;
  };

  return async (e: LogEvent) => {
    const { webhookId, replayId, since, requestedAt } = e.data as EventOf<'WebhookReplayRequested'>['data'];
    const w = queries.webhooks.byId(webhookId);
    if (!w) return 0;
    const atMs = Date.parse(requestedAt);
    const usage = createQuotaTracker(eventStore);
    // a message already waiting for this endpoint (its first delivery retrying, or an earlier replay's) is not
    // scheduled again: twenty replays of one day send it once, not twenty times
    if (lastScheduled > 0) await deps.projected(lastScheduled);
    const queued = new Set(
      queries.webhooks.deliveriesPage(webhookId, { status: 'pending', last: 100_000 }).map((d) => d.messageId),
    );
    let skipped = 0;
    let capped = false;
    let from = await positionAt(Date.parse(since), e.globalPosition);
    let last = 0;
    let sent = 0;
    // a replay asks for what the endpoint takes now, disabled or not (it is how a receiver catches up)
    const mine = (keyId: string, type: Message['type'], monitorId?: string) =>
      takes({ ...w, disabled: false }, { type, keyId, monitorId } as Message);
    for (;;) {
      const batch = await eventStore.readAll({ fromPosition: from, maxCount: 500 });
      const inRange = batch.filter((x) => x.globalPosition < e.globalPosition);
      for (const raw of inRange) {
        if (!replayable(raw)) continue;
        // read back from the log: validated as any event a reactor is handed
        const x = logEventOf(raw);
        if (!x) continue;
        const messages = await messagesOf(x, {
          queries,
          baseUrl: deps.baseUrl,
          summaries: deps.summaries,
          usage,
          interested: mine,
        });
        for (const m of messages) {
          if (!takes({ ...w, disabled: false }, m)) continue;
          if (queued.has(m.messageId)) {
            skipped++;
            continue;
          }
          if (sent >= maxMessages) {
            capped = true;
            break;
          }
          queued.add(m.messageId);
          last = Math.max(last, await deps.schedule(m, w, atMs, replayId));
          sent++;
        }
        if (capped) break;
      }
      if (capped || inRange.length < batch.length || batch.length === 0) break;
      from = batch[batch.length - 1]!.globalPosition;
    }
    lastScheduled = Math.max(lastScheduled, last);
    deps.log?.('webhook replay scheduled', {
      webhookId,
      replayId,
      since,
      deliveries: sent,
      alreadyQueued: skipped,
      ...(capped ? { capped: maxMessages } : {}),
    });
    return last;
  };
};
