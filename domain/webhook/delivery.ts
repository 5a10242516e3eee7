import { Map as PMap } from 'immutable';
import { type EventOf, replayOfDelivery } from '../../contracts/events.js';
import type { WebhookEventType } from '../../contracts/webhookEvents.js';
import type { Decider } from '../kernel/decider.js';
import { DomainError, errorCodes } from '../kernel/errors.js';

export type DeliveryEvent =
  | EventOf<'WebhookDeliveryScheduled'>
  | EventOf<'WebhookReplayScheduled'>
  | EventOf<'WebhookAttemptClaimed'>
  | EventOf<'WebhookDeliveryAttempted'>
  | EventOf<'WebhookDelivered'>
  | EventOf<'WebhookDeliveryGivenUp'>
  | EventOf<'WebhookDeliveryRetryRequested'>;

export type ScheduledData = EventOf<'WebhookDeliveryScheduled'>['data'];
export type ReplayData = EventOf<'WebhookReplayScheduled'>['data'];

interface Claim {
  attempt: number;
  worker: string;
  claimedAt: number;
  leaseUntil: number;
}

interface Known {
  status: 'pending' | 'delivered' | 'given_up';
  deliveryId: string;
  webhookId: string;
  eventType: WebhookEventType;
  /** what a retry carries back to the outbox: the key, the `webhook-id` and the exact body (none when replayed) */
  sent: Pick<ScheduledData, 'keyId' | 'messageId'> & { body?: string };
  /** a replayed delivery: its replay and when that was scheduled (its first claim says what the delivery is) */
  replay?: { replayId: string; scheduledAt: string };
  /** attempts made (claimed) so far */
  attempts: number;
  /** the 24 h retry window starts here: the scheduling, or the last retry the key asked for */
  windowStart: number;
  nextAttemptAt: number;
  claim?: Claim;
}
/**
 * A replay's stream (docs/webhooks.md#replay-recorded-by-reference): its deliveries, one per entry of the replay, each
 * pending from the replay's scheduling until an event of its own says otherwise (`touched` holds those). A persistent
 * map: each event changes one delivery of up to REPLAY_MAX_MESSAGES in O(log n), where copying a plain object made
 * folding a replay's stream O(n²).
 */
interface ReplayState {
  status: 'replay';
  replay: ReplayData;
  touched: PMap<string, Known>;
}
export type DeliveryState = { status: 'none' } | Known | ReplayState;

/** What an attempt came to, as the worker saw it. */
export interface AttemptOutcome {
  statusCode?: number;
  error?: string;
  latencyMs: number;
}

export type DeliveryCommand =
  | { type: 'ScheduleDelivery'; delivery: ScheduledData }
  | { type: 'ScheduleReplay'; replay: ReplayData }
  | {
      type: 'ClaimAttempt';
      deliveryId: string;
      worker: string;
      now: string;
      leaseMs: number;
      /** claims made before this instant by another worker are dead (the one process of a data directory restarted) */
      staleBefore?: number;
    }
  | {
      type: 'RecordAttempt';
      deliveryId: string;
      attempt: number;
      outcome: AttemptOutcome;
      /** the delay before the next attempt, jitter included (retryDelayMs) */
      retryDelayMs: number;
      /** how long after the window start attempts go on (24 h) */
      giveUpAfterMs: number;
      now: string;
    }
  | { type: 'GiveUp'; deliveryId: string; reason: string; now: string }
  | { type: 'RequestRetry'; deliveryId: string; now: string };

export const HOUR_MS = 3_600_000;

/**
 * The delay before attempt `attempt + 1` after attempt `attempt` failed (docs/webhooks.md): `baseMs` doubling per
 * attempt up to an hour, times a jitter in [0.8, 1.2) from `random` (0–1), never over the hour.
 */
export const retryDelayMs = (attempt: number, baseMs: number, random: number) =>
  Math.min(HOUR_MS, Math.min(HOUR_MS, baseMs * 2 ** Math.max(0, attempt - 1)) * (0.8 + 0.4 * random));

/** 2xx is delivered; everything else (a 3xx too: redirects are not followed) is a failed attempt. */
export const isSuccess = (statusCode: number | undefined) =>
  statusCode !== undefined && statusCode >= 200 && statusCode < 300;

const at = (iso: string) => Date.parse(iso);

/** one delivery's state, as its own stream or its replay's entry makes it */
const pendingOf = (d: {
  deliveryId: string;
  webhookId: string;
  eventType: WebhookEventType;
  keyId: string;
  messageId: string;
  body?: string;
  scheduledAt: string;
  replay?: Known['replay'];
}): Known => {
  const t = at(d.scheduledAt);
  return {
    status: 'pending',
    deliveryId: d.deliveryId,
    webhookId: d.webhookId,
    eventType: d.eventType,
    sent: { keyId: d.keyId, messageId: d.messageId, ...(d.body !== undefined ? { body: d.body } : {}) },
    ...(d.replay ? { replay: d.replay } : {}),
    attempts: 0,
    windowStart: t,
    nextAttemptAt: t,
  };
};

/** the delivery `deliveryId` names on this stream: the stream's own, or an entry of the replay it holds */
const deliveryOf = (state: DeliveryState, deliveryId: string): Known | undefined => {
  if (state.status === 'none') return undefined;
  if (state.status !== 'replay') return state;
  const touched = state.touched.get(deliveryId);
  if (touched) return touched;
  const named = replayOfDelivery(deliveryId);
  const r = state.replay;
  const entry = named?.replayId === r.replayId ? r.messages[named.index] : undefined;
  if (!entry) return undefined;
  return pendingOf({
    deliveryId,
    webhookId: r.webhookId,
    eventType: entry[2],
    keyId: r.keyId,
    messageId: entry[1],
    scheduledAt: r.scheduledAt,
    replay: { replayId: r.replayId, scheduledAt: r.scheduledAt },
  });
};

type OneCommand = Exclude<DeliveryCommand, { type: 'ScheduleDelivery' | 'ScheduleReplay' }>;

const decideOne = (c: OneCommand, state: Known): DeliveryEvent[] => {
  const base = { deliveryId: state.deliveryId, webhookId: state.webhookId, eventType: state.eventType };
  switch (c.type) {
    case 'ClaimAttempt': {
      const now = at(c.now);
      if (state.status !== 'pending' || now < state.nextAttemptAt) return [];
      const claim = state.claim;
      const dead =
        !claim ||
        claim.leaseUntil <= now ||
        (c.staleBefore !== undefined && claim.claimedAt < c.staleBefore && claim.worker !== c.worker);
      if (!dead) return [];
      // a replayed delivery's first claim says what it is: the read models list it by its own document from here
      const opened =
        state.replay && state.attempts === 0
          ? {
              opened: {
                webhookId: state.webhookId,
                keyId: state.sent.keyId,
                messageId: state.sent.messageId,
                eventType: state.eventType,
                scheduledAt: state.replay.scheduledAt,
              },
            }
          : {};
      return [
        {
          type: 'WebhookAttemptClaimed',
          data: {
            deliveryId: state.deliveryId,
            attempt: state.attempts + 1,
            worker: c.worker,
            claimedAt: c.now,
            leaseUntil: new Date(now + c.leaseMs).toISOString(),
            ...opened,
          },
        },
      ];
    }
    case 'RecordAttempt': {
      if (state.status !== 'pending' || state.claim?.attempt !== c.attempt) return [];
      const o = c.outcome;
      const outcome = {
        ...base,
        attempt: c.attempt,
        ...(o.statusCode !== undefined ? { statusCode: o.statusCode } : {}),
        ...(o.error !== undefined ? { error: o.error } : {}),
        latencyMs: o.latencyMs,
      };
      if (isSuccess(o.statusCode)) {
        return [
          { type: 'WebhookDelivered', data: { ...outcome, statusCode: o.statusCode as number, deliveredAt: c.now } },
        ];
      }
      if (o.statusCode === 410) {
        return [{ type: 'WebhookDeliveryGivenUp', data: { ...outcome, reason: 'endpoint_gone', givenUpAt: c.now } }];
      }
      const next = at(c.now) + c.retryDelayMs;
      if (next > state.windowStart + c.giveUpAfterMs) {
        return [
          { type: 'WebhookDeliveryGivenUp', data: { ...outcome, reason: 'retries_exhausted', givenUpAt: c.now } },
        ];
      }
      return [
        {
          type: 'WebhookDeliveryAttempted',
          data: { ...outcome, attemptedAt: c.now, nextAttemptAt: new Date(next).toISOString() },
        },
      ];
    }
    case 'GiveUp':
      if (state.status !== 'pending') return [];
      return [
        {
          type: 'WebhookDeliveryGivenUp',
          data: { ...base, attempt: state.attempts, reason: c.reason, givenUpAt: c.now },
        },
      ];
    case 'RequestRetry':
      return [
        {
          type: 'WebhookDeliveryRetryRequested',
          data: { ...base, requestedAt: c.now, ...state.sent },
        },
      ];
  }
};

type OneEvent = Exclude<DeliveryEvent, EventOf<'WebhookDeliveryScheduled'> | EventOf<'WebhookReplayScheduled'>>;

const evolveOne = (state: Known, e: OneEvent): Known => {
  switch (e.type) {
    case 'WebhookAttemptClaimed':
      return {
        ...state,
        attempts: Math.max(state.attempts, e.data.attempt),
        claim: {
          attempt: e.data.attempt,
          worker: e.data.worker,
          claimedAt: at(e.data.claimedAt),
          leaseUntil: at(e.data.leaseUntil),
        },
      };
    case 'WebhookDeliveryAttempted':
      return { ...state, claim: undefined, nextAttemptAt: at(e.data.nextAttemptAt) };
    case 'WebhookDelivered':
      return { ...state, status: 'delivered', claim: undefined };
    case 'WebhookDeliveryGivenUp':
      return { ...state, status: 'given_up', claim: undefined };
    case 'WebhookDeliveryRetryRequested': {
      const t = at(e.data.requestedAt);
      return { ...state, status: 'pending', claim: undefined, windowStart: t, nextAttemptAt: t };
    }
  }
};

/**
 * One delivery of one message to one endpoint (docs/webhooks.md). Scheduled once per id (the id is derived from the
 * endpoint and the event, so two workers schedule it once); each attempt is claimed on the stream before the POST,
 * so two workers never send the same attempt, and a claim whose worker died is taken again after its lease.
 *
 * A replay's stream holds all its deliveries (docs/webhooks.md#replay-recorded-by-reference): it starts with the
 * replay, recorded once whoever records it first, and each command and event after it names its delivery, whose
 * state is its entry's (pending since the replay) changed by the events that name it.
 */
export const deliveryDecider: Decider<DeliveryState, DeliveryCommand, DeliveryEvent> = {
  initialState: () => ({ status: 'none' }),
  decide(c, state) {
    if (c.type === 'ScheduleDelivery')
      return state.status === 'none' ? [{ type: 'WebhookDeliveryScheduled', data: c.delivery }] : [];
    if (c.type === 'ScheduleReplay')
      return state.status === 'none' ? [{ type: 'WebhookReplayScheduled', data: c.replay }] : [];
    const one = deliveryOf(state, c.deliveryId);
    if (!one) throw new DomainError(errorCodes.deliveryNotFound, 'delivery not found');
    return decideOne(c, one);
  },
  evolve(state, e) {
    if (e.type === 'WebhookDeliveryScheduled') return pendingOf(e.data);
    if (e.type === 'WebhookReplayScheduled') return { status: 'replay', replay: e.data, touched: PMap() };
    if (state.status !== 'replay') return state.status === 'none' ? state : evolveOne(state, e);
    const one = deliveryOf(state, e.data.deliveryId);
    if (!one) return state;
    return { ...state, touched: state.touched.set(one.deliveryId, evolveOne(one, e)) };
  },
};
