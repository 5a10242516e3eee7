import { createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { streams } from '../../contracts/events.js';
import { apiKeyDecider, type Limits } from '../../domain/apiKey/apiKey.js';
import type { CommandContext, CommandHandler } from '../ports/commandHandler.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `sk_` + 32 random base62 characters (docs/decisions.md#keys-secrets-and-admin). */
export const generateRawKey = () => {
  let s = 'sk_';
  for (let i = 0; i < 32; i++) s += BASE62[randomInt(62)];
  return s;
};

export const hashKey = (raw: string, pepper: string) => createHmac('sha256', pepper).update(raw).digest('hex');

export const safeEqualHex = (a: string, b: string) => {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
};

export const newKeyId = () => `key_${randomBytes(8).toString('hex')}`;

/** A key command refused for its input (the admin api answers 422 with `code`). */
export class KeyInputError extends RangeError {
  constructor(
    readonly code: 'SERP_ADMIN_UNKNOWN_TIER' | 'SERP_ADMIN_NO_CHANGE',
    message: string,
  ) {
    super(message);
    this.name = 'KeyInputError';
  }
}

export interface CreateKeyInput {
  tier: string;
  label?: string;
  monthlyQuota?: number;
  rateLimitPerMin?: number;
}

/** Key lifecycle commands; the raw key exists only in the return value of `create`. */
export const createKeyCommands = (deps: {
  handle: CommandHandler;
  pepper: string;
  tiers: Record<string, Omit<Limits, 'tier'>>;
  now?: () => Date;
}) => {
  const now = () => (deps.now?.() ?? new Date()).toISOString();
  // a Map, not the plain object: a tier named `__proto__`, `constructor` or `toString` is unknown, not a prototype's
  const tiers = new Map(Object.entries(deps.tiers));
  const unknownTier = (tier: string) =>
    new KeyInputError('SERP_ADMIN_UNKNOWN_TIER', `unknown tier "${tier}"; known: ${[...tiers.keys()].join(', ')}`);
  return {
    /** `ctx` carries the request's correlation id into the events' metadata (docs/design.md#streams-and-events). */
    async create(input: CreateKeyInput, ctx: CommandContext = {}) {
      const defaults = tiers.get(input.tier);
      if (!defaults) throw unknownTier(input.tier);
      const raw = generateRawKey();
      const keyId = newKeyId();
      const limits = {
        tier: input.tier,
        monthlyQuota: input.monthlyQuota ?? defaults.monthlyQuota,
        rateLimitPerMin: input.rateLimitPerMin ?? defaults.rateLimitPerMin,
      };
      const res = await deps.handle(
        streams.apiKey(keyId),
        apiKeyDecider,
        {
          type: 'IssueApiKey',
          keyId,
          keyHash: hashKey(raw, deps.pepper),
          prefix: raw.slice(0, 8),
          label: input.label,
          now: now(),
          ...limits,
        },
        ctx,
      );
      return { key: raw, keyId, prefix: raw.slice(0, 8), label: input.label, ...limits, position: res.position };
    },
    revoke: (keyId: string, ctx: CommandContext = {}) =>
      deps.handle(streams.apiKey(keyId), apiKeyDecider, { type: 'RevokeApiKey', keyId, now: now() }, ctx),
    /** Async, so that a refused input rejects the promise (the admin route maps it to 422) instead of throwing. */
    async changeLimits(keyId: string, limits: Partial<Limits>, ctx: CommandContext = {}) {
      const given = Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)) as Partial<Limits>;
      if (Object.keys(given).length === 0) {
        throw new KeyInputError('SERP_ADMIN_NO_CHANGE', 'give at least one of tier, monthly quota, rate');
      }
      // a new tier brings its quota and rate (docs/operations.md#keys), unless the change names them too
      const tier = given.tier === undefined ? undefined : tiers.get(given.tier);
      if (given.tier !== undefined && !tier) throw unknownTier(given.tier);
      const change = tier
        ? { monthlyQuota: tier.monthlyQuota, rateLimitPerMin: tier.rateLimitPerMin, ...given }
        : given;
      return deps.handle(
        streams.apiKey(keyId),
        apiKeyDecider,
        { type: 'ChangeApiKeyLimits', keyId, now: now(), ...change },
        ctx,
      );
    },
  };
};
export type KeyCommands = ReturnType<typeof createKeyCommands>;
