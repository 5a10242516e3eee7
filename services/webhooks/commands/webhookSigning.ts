import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * Standard Webhooks signing (docs/webhooks.md), with the `standardwebhooks` library receivers verify with. An
 * endpoint's secret is derived from a random seed recorded in its event and the server's key pepper, so the log and
 * the read models never hold a usable secret.
 */
export const newSecretSeed = () => randomBytes(24).toString('hex');

export const secretOf = (pepper: string, seed: string) =>
  `whsec_${createHmac('sha256', pepper).update(`webhook-secret\u0000${seed}`).digest('base64')}`;

/** The headers of one attempt: `webhook-signature` carries one signature per secret, space-separated. */
export const signedHeaders = (
  secrets: readonly string[],
  messageId: string,
  at: Date,
  body: string,
): Record<string, string> => ({
  'webhook-id': messageId,
  'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
  'webhook-signature': secrets.map((s) => new Webhook(s).sign(messageId, at, body)).join(' '),
});

/** The secrets an endpoint signs with at `now`: its own, and the one before a rotation for 24 h after it. */
export const secretsOf = (
  pepper: string,
  doc: { secretSeed: string; previousSeed?: string; previousValidUntil?: string },
  now: Date,
) => [
  secretOf(pepper, doc.secretSeed),
  ...(doc.previousSeed && doc.previousValidUntil && Date.parse(doc.previousValidUntil) > now.getTime()
    ? [secretOf(pepper, doc.previousSeed)]
    : []),
];
