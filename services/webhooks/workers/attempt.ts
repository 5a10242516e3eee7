import { type EventOf, replayOfDelivery, streams } from '../../../contracts/events.js';
import { deliveryDecider, isSuccess, retryDelayMs } from '../../../domain/webhook/delivery.js';
import { webhookDecider } from '../../../domain/webhook/webhook.js';
import type { ReadModelQueries } from '../../../projections/index.js';
import type { OutboxDoc } from '../../../projections/webhooks/webhooks.js';
import type { CommandHandler } from '../../ports/commandHandler.js';
import type { EventStore } from '../../ports/eventStore.js';
import { secretsOf, signedHeaders } from '../commands/webhookSigning.js';
import type { ResultSummaries } from './messages.js';
import { replayedMessage } from './replay.js';
import type { Sender, SendOutcome } from './sender.js';

export interface AttemptConfig {
  /** SERP_WEBHOOK_BACKOFF_MS: the first retry's delay, doubling per attempt up to an hour (default 5,000) */
  backoffMs: number;
  /** the whole exchange with a receiver (10 s) */
  timeoutMs: number;
  /** attempts go on this long after a delivery was scheduled (24 h) */
  giveUpAfterMs: number;
}

export interface AttemptReport {
  eventType: string;
  outcome: 'delivered' | 'retry' | 'given_up';
  latencyMs: number;
}

export type Scheduled = EventOf<'WebhookDeliveryScheduled'>['data'];
/** what an attempt sends */
type Sent = Pick<Scheduled, 'messageId' | 'body'>;

export interface AttemptDeps {
  eventStore: EventStore;
  queries: ReadModelQueries;
  handle: CommandHandler;
  /** resolves once the read models include `position` (the outbox then shows this worker's claims and outcomes) */
  projected(position: number): Promise<unknown>;
  sender: Sender;
  pepper: string;
  config: AttemptConfig;
  worker: string;
  /** claims of other workers made before this instant are dead (one process per data directory: embedded mode) */
  staleBefore?: number;
  now?: () => Date;
  random?: () => number;
  /** what replayed messages tell of results: the router's, which it forgets on a reparse or a purge */
  summaries?: ResultSummaries;
  onAttempt?: (report: AttemptReport) => void;
}

/**
 * One attempt of one delivery, whatever decides which delivery goes next (the deliverer's fair share, or the
 * first-come, first-served pool its benchmark measures it against): first claimed on the delivery's stream (the event
 * store's optimistic concurrency lets one claim win, so two workers never send the same attempt), then signed with the
 * endpoint's secrets of the moment, POSTed, and its outcome recorded: delivered, retried after a backoff with jitter,
 * or given up (24 h, or 410, which also disables the endpoint). A claim whose worker died is taken again once its
 * lease ends, or at once when `staleBefore` says its worker is a previous life of this process (docs/webhooks.md).
 */
export const createAttempts = (deps: AttemptDeps, options: { maxBodies: number }) => {
  const { queries, handle, config } = deps;
  const clock = () => deps.now?.() ?? new Date();
  const random = deps.random ?? Math.random;
  /** the bodies of deliveries the router just scheduled (their first attempt reads nothing) */
  const bodies = new Map<string, Sent>();
  /**
   * this worker's appends on deliveries (claims, outcomes) the read models may not hold yet, by delivery: the outbox
   * read before they are projected still shows the delivery due, and must not queue it again
   */
  const mine = new Map<string, number>();

  /** what this worker appended on a delivery, until the read models hold it */
  const appended = (deliveryId: string, position: number | undefined) => {
    if (position === undefined) return;
    mine.set(deliveryId, position);
    void deps.projected(position).then(() => {
      if (mine.get(deliveryId) === position) mine.delete(deliveryId);
    });
  };

  /**
   * What a delivery sends: told by the router, else kept by the outbox (a document per waiting delivery, read by id).
   * A replayed delivery's is made again from the log event its replay names
   * (docs/webhooks.md#replay-recorded-by-reference). Only a delivery whose retry was recorded before retries carried
   * the body is read from its stream.
   */
  const sentOf = async (deliveryId: string): Promise<Sent | undefined> => {
    const known = bodies.get(deliveryId) ?? queries.webhooks.outboxBody(deliveryId);
    if (known) return known;
    if (replayOfDelivery(deliveryId)) {
      const made = await replayedMessage(deps, deliveryId);
      // a message that cannot be made again (its job purged by retention since) will not be later either: it ends
      if (!made) {
        await handle(streams.webhookDelivery(deliveryId), deliveryDecider, {
          type: 'GiveUp',
          deliveryId,
          reason: 'message_gone',
          now: clock().toISOString(),
        });
      }
      return made;
    }
    const { events } = await deps.eventStore.readStream(streams.webhookDelivery(deliveryId), { maxCount: 1 });
    const first = events[0];
    return first?.type === 'WebhookDeliveryScheduled' ? (first.data as Scheduled) : undefined;
  };

  const attempt = async (d: OutboxDoc): Promise<SendOutcome | undefined> => {
    const stream = streams.webhookDelivery(d.deliveryId);
    const claimed = await handle(stream, deliveryDecider, {
      type: 'ClaimAttempt',
      deliveryId: d.deliveryId,
      worker: deps.worker,
      now: clock().toISOString(),
      leaseMs: config.timeoutMs + 5_000,
      staleBefore: deps.staleBefore,
    });
    const claim = claimed.events[0];
    if (claim?.type !== 'WebhookAttemptClaimed') return undefined;
    appended(d.deliveryId, claimed.position);
    const now = () => clock().toISOString();
    const webhook = queries.webhooks.byId(d.webhookId);
    if (!webhook || webhook.disabled) {
      await handle(stream, deliveryDecider, {
        type: 'GiveUp',
        deliveryId: d.deliveryId,
        reason: webhook ? 'endpoint_disabled' : 'endpoint_deleted',
        now: now(),
      });
      return undefined;
    }
    const message = await sentOf(d.deliveryId);
    if (!message) return undefined;
    const at = clock();
    const headers = signedHeaders(secretsOf(deps.pepper, webhook, at), message.messageId, at, message.body);
    const sent = await deps.sender.send(webhook.url, headers, message.body);
    const outcome = {
      ...sent,
      ...(sent.statusCode !== undefined && !isSuccess(sent.statusCode)
        ? {
            error:
              sent.statusCode >= 300 && sent.statusCode < 400
                ? `HTTP ${sent.statusCode}: redirects are not followed`
                : `HTTP ${sent.statusCode}`,
          }
        : {}),
    };
    const res = await handle(stream, deliveryDecider, {
      type: 'RecordAttempt',
      deliveryId: d.deliveryId,
      attempt: claim.data.attempt,
      outcome,
      retryDelayMs: retryDelayMs(claim.data.attempt, config.backoffMs, random()),
      giveUpAfterMs: config.giveUpAfterMs,
      now: now(),
    });
    const recorded = res.events[0];
    appended(d.deliveryId, res.position);
    if (recorded) {
      bodies.delete(d.deliveryId);
      deps.onAttempt?.({
        eventType: d.eventType,
        outcome:
          recorded.type === 'WebhookDelivered'
            ? 'delivered'
            : recorded.type === 'WebhookDeliveryGivenUp'
              ? 'given_up'
              : 'retry',
        latencyMs: sent.latencyMs,
      });
    }
    if (sent.statusCode === 410) {
      await handle(streams.webhook(d.webhookId), webhookDecider, {
        type: 'DisableGone',
        webhookId: d.webhookId,
        now: now(),
      });
    }
    return sent;
  };

  return {
    attempt,
    /** a delivery just scheduled: its body kept for its first attempt (up to `maxBodies` of them) */
    keep(s: Scheduled) {
      if (bodies.size < options.maxBodies) bodies.set(s.deliveryId, { messageId: s.messageId, body: s.body });
    },
    /** whether this worker appended on the delivery and the read models may not show it yet */
    unprojected: (deliveryId: string) => mine.has(deliveryId),
    /** whether a delivery of the outbox may be attempted at `at` (ms): due, and no live claim of another worker */
    claimable: (d: OutboxDoc, at: number) =>
      d.due <= at &&
      (d.leaseUntil === undefined ||
        d.leaseUntil <= at ||
        (deps.staleBefore !== undefined && (d.claimedAt ?? 0) < deps.staleBefore && d.worker !== deps.worker)),
  };
};
export type Attempts = ReturnType<typeof createAttempts>;
