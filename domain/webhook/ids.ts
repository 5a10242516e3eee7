import { createHash } from 'node:crypto';

const hex12 = (ms: number) => Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0').slice(-12);
const digest = (...parts: string[]) => createHash('sha256').update(parts.join('\u0000')).digest('hex');

/**
 * Ids derived from what they identify (docs/webhooks.md), so that two workers that see the same event decide the same
 * stream, and a retry, a crash or a replay sends the same `webhook-id`.
 */

/** The `webhook-id` of the message that tells of one event (its event id in the log), or of a key's month crossing. */
export const messageIdOf = (...what: string[]) => `msg_${digest('message', ...what).slice(0, 32)}`;

/**
 * One message to one endpoint: time-ordered by when the event happened. (A replay's deliveries: `replayedDeliveryIdOf`;
 * those an earlier version scheduled one event each keep the ids it derived, with the replay's id in the digest.)
 */
export const deliveryIdOf = (webhookId: string, messageId: string, atMs: number) =>
  `dlv_${hex12(atMs)}${digest('delivery', webhookId, messageId, '').slice(0, 12)}`;

export const replayIdOf = (atMs: number, random: string) => `rpl_${hex12(atMs)}${random.slice(0, 12)}`;

/**
 * The delivery of entry `index` of a replay (docs/webhooks.md#replay-recorded-by-reference): time-ordered by when the
 * replay was asked for, as any replayed delivery, and naming its replay, whose stream holds its attempts
 * (`replayOfDelivery` in contracts/events.ts reads it back).
 */
export const replayedDeliveryIdOf = (replayId: string, index: number) => {
  const m = /^rpl_([0-9a-f]{12})([0-9a-f]{12})$/.exec(replayId);
  if (!m || !Number.isInteger(index) || index < 0 || index > 0xffff) {
    throw new Error(`no replayed delivery id for ${replayId} #${index}`);
  }
  return `dlv_${m[1]}r${m[2]}${index.toString(16).padStart(4, '0')}`;
};
