import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { CompatError, CompatLocation } from '../../../../contracts/compat.js';
import type { Geotarget } from '../../../geo/geotargets.js';
import { ApiError } from '../../errors.js';
import type { CompatOptions } from './options.js';

const entry = (t: Geotarget): z.infer<typeof CompatLocation> => ({
  id: String(t.id),
  google_id: t.id,
  google_parent_id: t.parentId ?? null,
  name: t.name,
  canonical_name: t.canonicalName,
  country_code: t.countryCode,
  target_type: t.targetType,
  // SerpApi's reach counts people: a population here (docs/locations.md), 0 when unknown
  reach: t.population,
});

/**
 * SerpApi's Locations API (docs/compat.md#locations): a bare array, best match first (the most populous among
 * equals), from the geotargets that ship with the product; without `q`, the most populous places. No key (SerpApi's
 * needs none either); `location=` on /search takes any `canonical_name` or `google_id`, and the other forms in
 * docs/locations.md.
 */
export const locationRoutes: FastifyPluginAsync<CompatOptions> = async (app, opts) => {
  app.get('/locations.json', {
    config: { keyless: true },
    validatorCompiler: () => (data: unknown) => ({ value: data }),
    schema: {
      operationId: 'compatLocations',
      tags: ['compat'],
      summary: 'Search the locations /search accepts (no key needed)',
      security: [],
      querystring: z.object({
        q: z.string().optional().describe('a name or its beginning ("Austin", "Bayern"); empty: the largest places'),
        limit: z.string().optional().describe('1–100, default 10'),
      }),
      response: { 200: z.array(CompatLocation), 400: CompatError },
    },
    handler: async (req, reply) => {
      const query = req.query as Record<string, unknown>;
      const q = typeof query.q === 'string' ? query.q.slice(0, 256) : '';
      const rawLimit = typeof query.limit === 'string' && query.limit !== '' ? query.limit : '10';
      const limit = Number(rawLimit);
      if (!/^\d+$/.test(rawLimit) || limit < 1 || limit > 100)
        throw new ApiError(400, 'SERP_COMPAT_BAD_PARAMETER', 'limit must be an integer from 1 to 100.');
      const found = opts.locations?.search(q, limit) ?? [];
      return reply.type('application/json').send(JSON.stringify(found.map(entry)));
    },
  });
};
