import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyFormbody from '@fastify/formbody';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorBody } from '../../../../contracts/errors.js';
import { dashboardRoutes } from './dashboard.js';
import { keyRoutes } from './keys.js';
import { adminMonitorRoutes } from './monitors.js';
import type { AdminOptions } from './options.js';
import { adminPageRoutes } from './pages.js';
import { adminCookieSecret, cookieOptions, createSessionCheck } from './session.js';
import { uiRoutes } from './ui.js';

export type { AdminOptions } from './options.js';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The operator's scope: the dashboard's pages (`/admin`, signed in by cookie) and the admin api (`/admin/api`), which
 * answers the admin token as a Bearer header (scripts, the CLI) or the dashboard's session cookie; a write by cookie
 * must carry the page's CSRF token too (a Bearer header is never sent by a browser on its own, so it needs none).
 */
export const adminRoutes: FastifyPluginAsync<AdminOptions> = async (app, opts) => {
  await app.register(fastifyCookie, { secret: adminCookieSecret(opts.adminToken) });
  await app.register(fastifyCsrf, { cookieOpts: cookieOptions, logLevel: 'info' });
  const csrfProtection = app.csrfProtection;
  const hasSession = createSessionCheck(opts.queries, opts.catchUp);

  await app.register(async (ui) => {
    // form posts (sign in, sign out) are parsed here only: the json api stays json
    await ui.register(fastifyFormbody, { bodyLimit: 8 * 1024 });
    await ui.register(uiRoutes, {
      adminToken: opts.adminToken,
      csrfProtection,
      hasSession,
      sessions: opts.sessions,
      authFailures: opts.authFailures,
      projected: opts.projected,
    });
  });

  await app.register(
    async (api) => {
      const byCookie = new WeakSet<FastifyRequest>();
      api.addHook('onRequest', async (req) => {
        if (!req.headers.authorization && (await hasSession(req))) {
          byCookie.add(req);
          return;
        }
        await opts.guard(req);
      });
      // a write by cookie without the page's token is refused (403 SERP_ADMIN_CSRF): the OpenAPI says so on each write
      api.addHook('onRoute', (route) => {
        const response = route.schema?.response as Record<string, unknown> | undefined;
        const writes = [route.method].flat().some((m) => !SAFE.has(m));
        if (response && writes && !response[403]) response[403] = ErrorBody;
      });
      api.addHook('preHandler', (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
        if (!byCookie.has(req) || SAFE.has(req.method)) return done();
        csrfProtection.call(api, req, reply, done);
      });
      await api.register(keyRoutes, opts);
      await api.register(dashboardRoutes, opts);
      await api.register(adminMonitorRoutes, opts);
      await api.register(adminPageRoutes, opts);
    },
    { prefix: '/admin/api' },
  );
};
