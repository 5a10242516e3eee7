import { createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { streams } from '../../contracts/events.js';
import { apiKeyDecider, type Limits } from '../../domain/apiKey/apiKey.js';
import type { CommandHandler } from './commandHandler.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `sk_` + 32 random base62 characters (DESIGN.md §4). */
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
  return {
    async create(input: CreateKeyInput) {
      const defaults = deps.tiers[input.tier];
      if (!defaults) throw new RangeError(`unknown tier "${input.tier}"; known: ${Object.keys(deps.tiers).join(', ')}`);
      const raw = generateRawKey();
      const keyId = newKeyId();
      const limits = {
        tier: input.tier,
        monthlyQuota: input.monthlyQuota ?? defaults.monthlyQuota,
        rateLimitPerMin: input.rateLimitPerMin ?? defaults.rateLimitPerMin,
      };
      const res = await deps.handle(streams.apiKey(keyId), apiKeyDecider, {
        type: 'IssueApiKey',
        keyId,
        keyHash: hashKey(raw, deps.pepper),
        prefix: raw.slice(0, 8),
        label: input.label,
        now: now(),
        ...limits,
      });
      return { key: raw, keyId, prefix: raw.slice(0, 8), label: input.label, ...limits, position: res.position };
    },
    revoke: (keyId: string) =>
      deps.handle(streams.apiKey(keyId), apiKeyDecider, { type: 'RevokeApiKey', keyId, now: now() }),
    changeLimits: (keyId: string, limits: Partial<Limits>) => {
      if (limits.tier !== undefined && !deps.tiers[limits.tier]) {
        throw new RangeError(`unknown tier "${limits.tier}"; known: ${Object.keys(deps.tiers).join(', ')}`);
      }
      return deps.handle(streams.apiKey(keyId), apiKeyDecider, {
        type: 'ChangeApiKeyLimits',
        keyId,
        now: now(),
        ...limits,
      });
    },
  };
};
export type KeyCommands = ReturnType<typeof createKeyCommands>;
