import type { EventOf } from '../../contracts/events.js';
import type { Decider } from '../kernel/decider.js';
import { DomainError, errorCodes } from '../kernel/errors.js';

export type ApiKeyEvent = EventOf<'ApiKeyIssued'> | EventOf<'ApiKeyRevoked'> | EventOf<'ApiKeyLimitsChanged'>;

export interface Limits {
  tier: string;
  monthlyQuota: number;
  rateLimitPerMin: number;
}

export type ApiKeyState =
  | { status: 'none' }
  | ({ status: 'active' | 'revoked'; keyId: string; keyHash: string } & Limits);

export type ApiKeyCommand =
  | ({ type: 'IssueApiKey'; keyId: string; keyHash: string; prefix: string; label?: string; now: string } & Limits)
  | { type: 'RevokeApiKey'; keyId: string; now: string }
  | ({ type: 'ChangeApiKeyLimits'; keyId: string; now: string } & Partial<Limits>);

export const apiKeyDecider: Decider<ApiKeyState, ApiKeyCommand, ApiKeyEvent> = {
  initialState: () => ({ status: 'none' }),
  decide(command, state) {
    if (command.type === 'IssueApiKey') {
      if (state.status !== 'none') {
        if (state.keyHash === command.keyHash) return [];
        throw new DomainError(errorCodes.keyExists, `key ${command.keyId} already exists`);
      }
      const { keyId, keyHash, prefix, tier, monthlyQuota, rateLimitPerMin, label, now } = command;
      return [
        {
          type: 'ApiKeyIssued',
          data: { keyId, keyHash, prefix, tier, monthlyQuota, rateLimitPerMin, label, issuedAt: now },
        },
      ];
    }
    if (state.status === 'none') throw new DomainError(errorCodes.keyNotFound, `no key with id ${command.keyId}`);
    if (command.type === 'RevokeApiKey') {
      return state.status === 'revoked'
        ? []
        : [{ type: 'ApiKeyRevoked', data: { keyId: command.keyId, revokedAt: command.now } }];
    }
    if (state.status === 'revoked') throw new DomainError(errorCodes.keyRevoked, `key ${command.keyId} is revoked`);
    const changed: Partial<Limits> = {};
    if (command.tier !== undefined && command.tier !== state.tier) changed.tier = command.tier;
    if (command.monthlyQuota !== undefined && command.monthlyQuota !== state.monthlyQuota)
      changed.monthlyQuota = command.monthlyQuota;
    if (command.rateLimitPerMin !== undefined && command.rateLimitPerMin !== state.rateLimitPerMin)
      changed.rateLimitPerMin = command.rateLimitPerMin;
    if (Object.keys(changed).length === 0) return [];
    return [{ type: 'ApiKeyLimitsChanged', data: { keyId: command.keyId, ...changed, changedAt: command.now } }];
  },
  evolve(state, event) {
    switch (event.type) {
      case 'ApiKeyIssued': {
        const { keyId, keyHash, tier, monthlyQuota, rateLimitPerMin } = event.data;
        return { status: 'active', keyId, keyHash, tier, monthlyQuota, rateLimitPerMin };
      }
      case 'ApiKeyRevoked':
        return state.status === 'none' ? state : { ...state, status: 'revoked' };
      case 'ApiKeyLimitsChanged': {
        if (state.status === 'none') return state;
        const { tier, monthlyQuota, rateLimitPerMin } = event.data;
        return {
          ...state,
          tier: tier ?? state.tier,
          monthlyQuota: monthlyQuota ?? state.monthlyQuota,
          rateLimitPerMin: rateLimitPerMin ?? state.rateLimitPerMin,
        };
      }
    }
  },
};
