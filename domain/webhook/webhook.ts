import type { EventOf } from '../../contracts/events.js';
import type { WebhookEventType } from '../../contracts/webhookEvents.js';
import type { Decider } from '../kernel/decider.js';
import { DomainError, errorCodes } from '../kernel/errors.js';

export type WebhookEvent =
  | EventOf<'WebhookCreated'>
  | EventOf<'WebhookChanged'>
  | EventOf<'WebhookSecretRotated'>
  | EventOf<'WebhookDeleted'>
  | EventOf<'WebhookReplayRequested'>;

export type WebhookState =
  | { status: 'none' }
  | { status: 'active' | 'deleted'; webhookId: string; keyId: string; secretSeed: string; disabled: boolean };

export type WebhookCommand =
  | {
      type: 'CreateWebhook';
      webhookId: string;
      keyId: string;
      url: string;
      events: WebhookEventType[];
      monitorIds?: string[];
      secretSeed: string;
      now: string;
    }
  | {
      type: 'ChangeWebhook';
      webhookId: string;
      keyId: string;
      url?: string;
      events?: WebhookEventType[];
      monitorIds?: string[] | null;
      disabled?: boolean;
      now: string;
    }
  /** the receiver answered 410: the service disables the endpoint (no key: it is the service's own decision) */
  | { type: 'DisableGone'; webhookId: string; now: string }
  | { type: 'RotateSecret'; webhookId: string; keyId: string; secretSeed: string; graceMs: number; now: string }
  | { type: 'DeleteWebhook'; webhookId: string; keyId: string; now: string }
  | { type: 'RequestReplay'; webhookId: string; keyId: string; replayId: string; since: string; now: string };

const notFound = () => new DomainError(errorCodes.webhookNotFound, 'webhook not found');

/**
 * An endpoint of a key (docs/webhooks.md): created once, changed, its secret rotated, deleted once. Another key's
 * endpoint is "not found", exactly like one that does not exist.
 */
export const webhookDecider: Decider<WebhookState, WebhookCommand, WebhookEvent> = {
  initialState: () => ({ status: 'none' }),
  decide(c, state) {
    if (c.type === 'CreateWebhook') {
      if (state.status !== 'none') throw new DomainError(errorCodes.webhookInvalid, `webhook ${c.webhookId} exists`);
      const { type: _t, now, monitorIds, ...rest } = c;
      return [{ type: 'WebhookCreated', data: { ...rest, ...(monitorIds ? { monitorIds } : {}), createdAt: now } }];
    }
    if (state.status !== 'active') {
      if (c.type === 'DisableGone') return [];
      throw notFound();
    }
    if (c.type === 'DisableGone') {
      if (state.disabled) return [];
      return [
        {
          type: 'WebhookChanged',
          data: { webhookId: c.webhookId, disabled: true, disabledReason: 'endpoint_gone', changedAt: c.now },
        },
      ];
    }
    if (state.keyId !== c.keyId) throw notFound();
    switch (c.type) {
      case 'ChangeWebhook':
        return [
          {
            type: 'WebhookChanged',
            data: {
              webhookId: c.webhookId,
              ...(c.url !== undefined ? { url: c.url } : {}),
              ...(c.events !== undefined ? { events: c.events } : {}),
              ...(c.monitorIds !== undefined ? { monitorIds: c.monitorIds } : {}),
              ...(c.disabled !== undefined
                ? { disabled: c.disabled, ...(c.disabled ? { disabledReason: 'by_key' } : {}) }
                : {}),
              changedAt: c.now,
            },
          },
        ];
      case 'RotateSecret':
        return [
          {
            type: 'WebhookSecretRotated',
            data: {
              webhookId: c.webhookId,
              secretSeed: c.secretSeed,
              previousSeed: state.secretSeed,
              previousValidUntil: new Date(Date.parse(c.now) + c.graceMs).toISOString(),
              rotatedAt: c.now,
            },
          },
        ];
      case 'DeleteWebhook':
        return [{ type: 'WebhookDeleted', data: { webhookId: c.webhookId, deletedAt: c.now } }];
      case 'RequestReplay':
        return [
          {
            type: 'WebhookReplayRequested',
            data: { webhookId: c.webhookId, replayId: c.replayId, since: c.since, requestedAt: c.now },
          },
        ];
    }
  },
  evolve(state, e) {
    switch (e.type) {
      case 'WebhookCreated':
        return {
          status: 'active',
          webhookId: e.data.webhookId,
          keyId: e.data.keyId,
          secretSeed: e.data.secretSeed,
          disabled: false,
        };
      case 'WebhookChanged':
        return state.status === 'none' ? state : { ...state, disabled: e.data.disabled ?? state.disabled };
      case 'WebhookSecretRotated':
        return state.status === 'none' ? state : { ...state, secretSeed: e.data.secretSeed };
      case 'WebhookDeleted':
        return state.status === 'none' ? state : { ...state, status: 'deleted' };
      case 'WebhookReplayRequested':
        return state;
    }
  },
};
