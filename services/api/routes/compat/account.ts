import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CompatAccount, CompatError } from '../../../../contracts/compat.js';
import type { CompatOptions } from './options.js';

const planName = (tier: string) => `${tier.charAt(0).toUpperCase()}${tier.slice(1)} Plan`;

/** The first day of next month (UTC), when a monthly quota starts again. */
const renewal = (now: Date) =>
  new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);

/** SerpApi's Account API (docs/compat.md#account) from the key's tier, quota and usage; it costs no quota. */
export const accountRoutes: FastifyPluginAsync<CompatOptions> = async (app, opts) => {
  for (const [url, operationId] of [
    ['/account', 'compatAccount'],
    ['/account.json', 'compatAccountJson'],
  ] as const) {
    app.withTypeProvider<ZodTypeProvider>().get(url, {
      config: { limit: 'read' },
      // the key may come as api_key; other parameters (source, engine: the legacy client adds it) are ignored
      validatorCompiler: () => (data: unknown) => ({ value: data }),
      schema: {
        operationId,
        tags: ['compat'],
        summary: "The key's plan and usage under SerpApi's Account API names",
        security: [{ apiKeyQuery: [] }, { apiKey: [] }, { bearer: [] }],
        querystring: z.object({ api_key: z.string().optional() }),
        response: { 200: CompatAccount, 401: CompatError, 429: CompatError },
      },
      handler: async (req) => {
        const key = req.apiKey!;
        // read-your-writes: a search submitted a moment ago is counted
        await opts.searches.settled(key.keyId);
        const usage = opts.searches.usage(key);
        const recent = opts.searches.recentSearches(key);
        const unlimited = key.monthlyQuota === 0;
        return {
          account_id: key.keyId,
          api_key: `${key.prefix}…`,
          account_email: null,
          account_status: 'Active',
          plan_id: key.tier,
          plan_name: planName(key.tier),
          plan_monthly_price: null,
          searches_per_month: unlimited ? null : key.monthlyQuota,
          plan_searches_left: usage.remaining,
          extra_credits: 0,
          total_searches_left: usage.remaining,
          this_month_usage: usage.used_this_month,
          this_hour_searches: recent.thisHour,
          last_hour_searches: recent.lastHour,
          account_rate_limit_per_hour: key.rateLimitPerMin * 60,
          plan_renewal_date: renewal(new Date()),
        };
      },
    });
  }
};
