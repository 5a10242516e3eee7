import { z } from 'zod';

/**
 * The parsers of the configuration schema (schema.ts): each turns one variable's string into its value, and returns
 * the variable's default when it is unset. A default is given here, as the parser's argument, and nowhere else: the
 * configuration (config.ts), docs/configuration.md (docs.ts) and every consumer read it from the parsed values.
 */

/** a blank value is an unset one (`SERP_X=` in a compose file) */
const unset = (v: string | undefined): v is undefined => v === undefined || v.trim() === '';

/**
 * A whole number ≥ 0 (the message the service has always given). `zeroMeans`: what a 0 stands for, a number or the
 * default; without a default (`undefined`: a value derived at load, config.ts) the value may be absent.
 */
export const wholeNumber = <F extends number | undefined = undefined>(
  fallback?: F,
  options: { zeroMeans?: number | 'the default' } = {},
) =>
  z
    .string()
    .optional()
    .transform((v, ctx): number | F => {
      if (unset(v)) return fallback as F;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0) {
        ctx.addIssue({ code: 'custom', message: `must be a non-negative integer, got "${v}"` });
        return z.NEVER;
      }
      if (n !== 0 || options.zeroMeans === undefined) return n;
      return options.zeroMeans === 'the default' ? (fallback as F) : options.zeroMeans;
    });

/** 1 (or any whole number above 0): on; 0: off. Refused as a whole number is. */
export const flag = (fallback: boolean) => wholeNumber(fallback ? 1 : 0).transform((n) => n > 0);

/** a whole number within bounds, with the message distributed mode has always given */
export const bounded = (fallback: number, min: number, max: number, unit: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (unset(v)) return fallback;
      const n = Number(v);
      if (!Number.isInteger(n)) ctx.addIssue({ code: 'custom', message: `must be ${unit}` });
      else if (n < min) ctx.addIssue({ code: 'custom', message: `must be at least ${min}` });
      else if (n > max) ctx.addIssue({ code: 'custom', message: `must be at most ${max}` });
      else return n;
      return z.NEVER;
    });

/** any text; without a fallback, absent when unset */
export const text = <F extends string | undefined = undefined>(fallback?: F) =>
  z
    .string()
    .optional()
    .transform((v): string | F => (unset(v) ? (fallback as F) : v));

export const oneOf = <const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) =>
  z
    .string()
    .optional()
    .transform((v, ctx): T[number] => {
      if (unset(v)) return fallback;
      if ((values as readonly string[]).includes(v)) return v as T[number];
      ctx.addIssue({
        code: 'custom',
        message: `must be ${values.join(', ').replace(/, ([^,]*)$/, ' or $1')}, got "${v}"`,
      });
      return z.NEVER;
    });

/** seconds ≥ 0, decimals allowed (a value in seconds, as the variable's name says) */
export const seconds = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (unset(v)) return fallback;
      const n = Number(v);
      if (!Number.isFinite(n) || n < 0) {
        ctx.addIssue({ code: 'custom', message: `must be a non-negative number of seconds, got "${v}"` });
        return z.NEVER;
      }
      return n;
    });

/** a fraction within [0, max] */
export const fraction = (fallback: number, max: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (unset(v)) return fallback;
      const n = Number(v);
      if (!Number.isFinite(n) || n < 0 || n > max) {
        ctx.addIssue({
          code: 'custom',
          message: `must be a number from 0 to ${Math.floor(max * 1000) / 1000}, got "${v}"`,
        });
        return z.NEVER;
      }
      return n;
    });

/** comma-separated, blanks dropped; unset: none */
export const list = () =>
  z
    .string()
    .optional()
    .transform((v): string[] =>
      (v ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    );

/** A tier's limits: quota and rate, and rank tracking's (docs/rank-tracking.md). */
export interface TierLimits {
  monthlyQuota: number;
  rateLimitPerMin: number;
  /** monitors a key of this tier may have */
  monitors: number;
  /** keywords one monitor may hold */
  keywordsPerMonitor: number;
  /**
   * a key's share of the fleet against other keys in the same lane (docs/fleet.md#lanes-and-fair-share): a key of
   * share 4 is served four pages for each page of a key of share 1 while both wait
   */
  share: number;
}

const Tiers = z.record(
  z.string(),
  z.object({
    monthlyQuota: z.number().int().nonnegative(),
    rateLimitPerMin: z.number().int().positive(),
    monitors: z.number().int().nonnegative().optional(),
    keywordsPerMonitor: z.number().int().positive().max(10_000).optional(),
    share: z.number().positive().max(1000).optional(),
  }),
);

/**
 * JSON naming tiers and their limits, over `defaults` (a tier named in both is the JSON's); a tier that leaves out
 * rank tracking's limits or its share gets `omitted`'s
 */
export const tiers = (
  defaults: Readonly<Record<string, TierLimits>>,
  omitted: Pick<TierLimits, 'monitors' | 'keywordsPerMonitor' | 'share'>,
) =>
  z
    .string()
    .optional()
    .transform((v, ctx): Record<string, TierLimits> => {
      if (unset(v)) return { ...defaults };
      let json: unknown;
      try {
        json = JSON.parse(v);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON: {"name":{"monthlyQuota":N,"rateLimitPerMin":N},…}' });
        return z.NEVER;
      }
      const parsed = Tiers.safeParse(json);
      if (!parsed.success) {
        ctx.addIssue({
          code: 'custom',
          message:
            'must map tier names to {"monthlyQuota": N ≥ 0, "rateLimitPerMin": N ≥ 1, "monitors"?: N ≥ 0, "keywordsPerMonitor"?: 1–10000, "share"?: 0 < N ≤ 1000}',
        });
        return z.NEVER;
      }
      const given = Object.entries(parsed.data).map(([name, limits]) => [
        name,
        {
          monitors: limits.monitors ?? omitted.monitors,
          keywordsPerMonitor: limits.keywordsPerMonitor ?? omitted.keywordsPerMonitor,
          share: limits.share ?? omitted.share,
          monthlyQuota: limits.monthlyQuota,
          rateLimitPerMin: limits.rateLimitPerMin,
        },
      ]);
      return { ...defaults, ...Object.fromEntries(given) };
    });

/** Every secret a deployment sets is at least this long in every mode (the generated ones are 43; docs/security.md). */
export const MIN_SECRET_LENGTH = 16;

/** a secret a deployment may set; unset: absent (embedded mode makes one, distributed mode requires it) */
export const secret = () =>
  z
    .string()
    .optional()
    .transform((v, ctx): string | undefined => {
      if (unset(v)) return undefined;
      if (v.length >= MIN_SECRET_LENGTH) return v;
      ctx.addIssue({ code: 'custom', message: `must be at least ${MIN_SECRET_LENGTH} characters` });
      return z.NEVER;
    });
