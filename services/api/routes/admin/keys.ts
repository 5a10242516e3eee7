import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorBody } from '../../../../contracts/errors.js';
import { usageMonth } from '../../../../domain/usage/usage.js';
import { KeyInputError } from '../../../application/keys.js';
import { ApiError } from '../../errors.js';
import { KeyView, keyView } from '../../keyView.js';
import type { AdminOptions } from './options.js';

/** a key in the list, with this month's usage (monthly_quota 0 is unlimited: remaining null) */
export const KeyListed = KeyView.extend({
  used_this_month: z.number().int(),
  remaining: z.number().int().nullable(),
});

export const CreateKeyBody = z
  .object({
    tier: z.string().min(1),
    label: z.string().max(200).optional(),
    monthly_quota: z.number().int().nonnegative().optional(),
    rate_limit_per_min: z.number().int().positive().optional(),
  })
  .strict();

export const LimitsBody = z
  .object({
    tier: z.string().min(1).optional(),
    monthly_quota: z.number().int().nonnegative().optional(),
    rate_limit_per_min: z.number().int().positive().optional(),
  })
  .strict()
  .refine((b) => Object.values(b).some((v) => v !== undefined), {
    message: 'give at least one of tier, monthly_quota, rate_limit_per_min',
  });

/** The key api (`/admin/api/keys…`). Every write returns only once its events are projected, so a revoked key is refused on its very next request. */
export const keyRoutes: FastifyPluginAsync<AdminOptions> = async (app, opts) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const known = (keyId: string) => {
    const doc = opts.queries.keys.byId(keyId);
    if (!doc) throw new ApiError(404, 'SERP_KEY_NOT_FOUND', `no key with id ${keyId}`);
    return doc;
  };
  const settled = async (position: number | undefined) => {
    if (position !== undefined) await opts.projected(position);
  };
  const inputError = (err: unknown) => (err instanceof KeyInputError ? new ApiError(422, err.code, err.message) : err);
  // documented in /openapi.json under the admin token's own scheme
  const admin = { tags: ['admin'], security: [{ adminToken: [] }] };

  r.get('/keys', {
    schema: {
      ...admin,
      operationId: 'listKeys',
      summary: 'Every API key with its tier, limits and status',
      response: { 200: z.object({ keys: z.array(KeyListed) }), 401: ErrorBody },
    },
    handler: async () => {
      const month = usageMonth((opts.now?.() ?? new Date()).toISOString());
      return {
        keys: opts.queries.keys.all().map((d) => {
          const used = opts.queries.usage.used(d.keyId, month);
          return {
            ...keyView(d),
            used_this_month: used,
            remaining: d.monthlyQuota === 0 ? null : Math.max(0, d.monthlyQuota - used),
          };
        }),
      };
    },
  });

  r.post('/keys', {
    schema: {
      ...admin,
      operationId: 'createKey',
      summary: 'Mint a key; the raw key is in this answer only',
      body: CreateKeyBody,
      response: { 201: KeyView.extend({ key: z.string() }), 401: ErrorBody, 422: ErrorBody },
    },
    handler: async (req, reply) => {
      const b = req.body;
      const created = await opts.keys
        .create(
          { tier: b.tier, label: b.label, monthlyQuota: b.monthly_quota, rateLimitPerMin: b.rate_limit_per_min },
          { correlationId: req.id },
        )
        .catch((e) => {
          throw inputError(e);
        });
      await settled(created.position);
      return reply.code(201).send({ ...keyView(known(created.keyId)), key: created.key });
    },
  });

  r.post('/keys/:key_id/revoke', {
    schema: {
      ...admin,
      operationId: 'revokeKey',
      summary: 'Revoke a key: its next request gets 401',
      params: z.object({ key_id: z.string().max(64) }),
      response: { 200: KeyView, 401: ErrorBody, 404: ErrorBody },
    },
    handler: async (req) => {
      known(req.params.key_id);
      await settled((await opts.keys.revoke(req.params.key_id, { correlationId: req.id })).position);
      return keyView(known(req.params.key_id));
    },
  });

  r.patch('/keys/:key_id', {
    schema: {
      ...admin,
      operationId: 'changeKeyLimits',
      summary: "Change a key's tier, monthly quota or rate",
      params: z.object({ key_id: z.string().max(64) }),
      body: LimitsBody,
      response: { 200: KeyView, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody, 422: ErrorBody },
    },
    handler: async (req) => {
      known(req.params.key_id);
      const b = req.body;
      const res = await opts.keys
        .changeLimits(
          req.params.key_id,
          { tier: b.tier, monthlyQuota: b.monthly_quota, rateLimitPerMin: b.rate_limit_per_min },
          { correlationId: req.id },
        )
        .catch((e) => {
          throw inputError(e);
        });
      await settled(res.position);
      return keyView(known(req.params.key_id));
    },
  });
};
