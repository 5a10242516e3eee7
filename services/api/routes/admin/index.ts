import type { FastifyPluginAsync } from 'fastify';
import type { ReadModelQueries } from '../../../../projections/index.js';
import type { KeyCommands } from '../../../application/keys.js';
import type { AdminGuard } from '../../auth.js';
import { keyRoutes } from './keys.js';

export interface AdminOptions {
  guard: AdminGuard;
  queries: ReadModelQueries;
  keys: KeyCommands;
  /** resolves once the read models include `position` (admin writes answer only then) */
  projected(position: number): Promise<void>;
}

/** `/admin`: the operator's scope, behind SERP_ADMIN_TOKEN, checked once here for every route in it. */
export const adminRoutes: FastifyPluginAsync<AdminOptions> = async (app, opts) => {
  app.addHook('onRequest', async (req) => opts.guard(req));
  const { prefix: _prefix, ...routeOptions } = opts as AdminOptions & { prefix?: string };
  await app.register(keyRoutes, { ...routeOptions, prefix: '/api' });
};
