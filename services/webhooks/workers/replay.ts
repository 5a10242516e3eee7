import { type EventOf, replayOfDelivery, streams } from '../../../contracts/events.js';
import type { WebhookEventType } from '../../../contracts/webhookEvents.js';
import { REPLAY_MAX_MESSAGES } from '../../../contracts/webhooks.js';
import { deliveryDecider } from '../../../domain/webhook/delivery.js';
import type { ReadModelQueries } from '../../../projections/index.js';
import type { WebhookDoc } from '../../../projections/webhooks/webhooks.js';
import type { CommandHandler } from '../../ports/commandHandler.js';
import type { EventStore, RecordedEvent } from '../../ports/eventStore.js';
import { type LogEvent, logEventOf } from '../../reactor/reactor.js';
import { messagesOf, SOURCE_TYPES } from './eventTypes.js';
import { bodyOf, createResultSummaries, type Message, type ResultSummaries } from './messages.js';
import { createQuotaTracker } from './quota.js';

/** the event types that can become a message (services/webhooks/workers/eventTypes.ts): the ones a replay reads again */
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
 * What the replays asked in one batch share: ten replays of the same day (one an endpoint, as a key catching up asks
 * them) read the same events, so each event's messages are made once, for every endpoint of the batch, and each
 * replay takes its endpoint's.
 */
export interface ReplayBatch {
  interested(keyId: string, type: WebhookEventType, monitorId?: string): boolean;
  /** each event's messages, by its position */
  messages: Map<number, Message[]>;
  /** the log read so far, by the position each read started after (replays of one `since` read the same pages) */
  pages: Map<number, RecordedEvent[]>;
}

export const replayBatch = (queries: ReadModelQueries, requests: LogEvent[]): ReplayBatch => {
  const endpoints = requests.flatMap((e) => {
    const w = queries.webhooks.byId((e.data as EventOf<'WebhookReplayRequested'>['data']).webhookId);
    return w ? [{ ...w, disabled: false }] : [];
  });
  return {
    interested: (keyId, type, monitorId) => endpoints.some((w) => takes(w, { type, keyId, monitorId } as Message)),
    messages: new Map(),
    pages: new Map(),
  };
};

/**
 * A replay (docs/webhooks.md#replay-bounded): every message of the endpoint's types recorded from `since` up to the
 * request, read again from the log, selected (the endpoint takes it, it is not waiting already, at most
 * REPLAY_MAX_MESSAGES) and recorded by reference, as one `WebhookReplayScheduled` on the replay's stream
 * (docs/webhooks.md#replay-recorded-by-reference): each message is an entry (where its event is, its `webhook-id`, its
 * type), never its body, which an attempt rebuilds (`replayedMessage`). The router hands it each
 * `WebhookReplayRequested`; it answers the position the replay was recorded at (0: nothing recorded).
 */
export const createReplayer = (deps: {
  eventStore: EventStore;
  queries: ReadModelQueries;
  baseUrl: string;
  summaries: ResultSummaries;
  handle: CommandHandler;
  now: () => Date;
  /** resolves once the read models hold `position` */
  projected(position: number): Promise<unknown>;
  maxMessages?: number;
  log?: (msg: string, fields: Record<string, unknown>) => void;
}) => {
  const { eventStore, queries } = deps;
  const maxMessages = deps.maxMessages ?? REPLAY_MAX_MESSAGES;
  /** the last replay this replayer recorded: the next replay reads the deliveries once they hold it */
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

  return async (e: LogEvent, shared?: ReplayBatch) => {
    const { webhookId, replayId, since, requestedAt } = e.data as EventOf<'WebhookReplayRequested'>['data'];
    const w = queries.webhooks.byId(webhookId);
    if (!w) return 0;
    // recorded already (a second dispatcher's router, or this one before a crash): nothing to read again
    const stream = streams.webhookReplay(replayId);
    if ((await eventStore.readStream(stream, { maxCount: 1 })).events.length > 0) return 0;
    const usage = createQuotaTracker(eventStore);
    // a message already waiting for this endpoint (its first delivery retrying, or an earlier replay's) is not
    // scheduled again: twenty replays of one day send it once, not twenty times
    if (lastScheduled > 0) await deps.projected(lastScheduled);
    const queued = new Set(
      queries.webhooks.deliveriesPage(webhookId, { status: 'pending', last: 100_000 }).map((d) => d.messageId),
    );
    let skipped = 0;
    let capped = false;
    const fromPosition = await positionAt(Date.parse(since), e.globalPosition);
    let from = fromPosition;
    const selected: Array<[number, string, WebhookEventType]> = [];
    // a replay asks for what the endpoint takes now, disabled or not (it is how a receiver catches up)
    const mine = (keyId: string, type: Message['type'], monitorId?: string) =>
      takes({ ...w, disabled: false }, { type, keyId, monitorId } as Message);
    for (;;) {
      let batch = shared?.pages.get(from);
      if (!batch) {
        batch = await eventStore.readAll({ fromPosition: from, maxCount: 500 });
        shared?.pages.set(from, batch);
      }
      const inRange = batch.filter((x) => x.globalPosition < e.globalPosition);
      for (const raw of inRange) {
        if (!replayable(raw)) continue;
        // made once for every replay of the batch (an event's messages are the same whoever reads them)
        let messages = shared?.messages.get(raw.globalPosition);
        if (!messages) {
          // read back from the log: validated as any event a reactor is handed
          const x = logEventOf(raw);
          if (!x) continue;
          messages = await messagesOf(x, {
            queries,
            baseUrl: deps.baseUrl,
            summaries: deps.summaries,
            usage,
            interested: shared?.interested ?? mine,
          });
          shared?.messages.set(raw.globalPosition, messages);
        }
        for (const m of messages) {
          if (!takes({ ...w, disabled: false }, m)) continue;
          if (queued.has(m.messageId)) {
            skipped++;
            continue;
          }
          if (selected.length >= maxMessages) {
            capped = true;
            break;
          }
          queued.add(m.messageId);
          selected.push([raw.globalPosition, m.messageId, m.type]);
        }
        if (capped) break;
      }
      if (capped || inRange.length < batch.length || batch.length === 0) break;
      from = batch[batch.length - 1]!.globalPosition;
    }
    const res = await deps.handle(stream, deliveryDecider, {
      type: 'ScheduleReplay',
      replay: {
        replayId,
        webhookId,
        keyId: w.keyId,
        since,
        requestedAt,
        scheduledAt: deps.now().toISOString(),
        fromPosition,
        toPosition: e.globalPosition,
        baseUrl: deps.baseUrl,
        selected: selected.length,
        capped,
        skipped,
        messages: selected,
      },
    });
    const last = res.position ?? 0;
    lastScheduled = Math.max(lastScheduled, last);
    deps.log?.('webhook replay scheduled', {
      webhookId,
      replayId,
      since,
      deliveries: selected.length,
      alreadyQueued: skipped,
      ...(capped ? { capped: maxMessages } : {}),
    });
    return last;
  };
};

/**
 * What a replayed delivery sends (docs/webhooks.md#replay-recorded-by-reference): its replay's entry names the log
 * event its message is made from; the message is made again from it, as the router made it (the same registry, the
 * links on the replay's origin), with its original `webhook-id`. Undefined for a delivery that is not a replayed one,
 * or whose event or job is gone (retention).
 */
export const replayedMessage = async (
  deps: {
    eventStore: EventStore;
    queries: ReadModelQueries;
    /** the router's summaries (forgotten on a reparse or purge): a replay of 1,000 searches reads each result once */
    summaries?: ResultSummaries;
  },
  deliveryId: string,
): Promise<{ messageId: string; body: string } | undefined> => {
  const named = replayOfDelivery(deliveryId);
  const replay = named && deps.queries.webhooks.replay(named.replayId);
  const entry = named && replay?.messages[named.index];
  if (!replay || !entry) return undefined;
  const [position, messageId, type] = entry;
  const [raw] = await deps.eventStore.readAll({ fromPosition: position - 1, maxCount: 1 });
  const e = raw?.globalPosition === position ? logEventOf(raw) : undefined;
  if (!e) return undefined;
  const messages = await messagesOf(e, {
    queries: deps.queries,
    baseUrl: replay.baseUrl,
    summaries: deps.summaries ?? createResultSummaries(deps.queries),
    usage: createQuotaTracker(deps.eventStore),
    interested: (_keyId, t) => t === type,
  });
  const m = messages.find((x) => x.messageId === messageId && x.type === type);
  return m && { messageId, body: bodyOf(m) };
};
