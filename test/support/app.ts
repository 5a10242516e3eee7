import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import { createMemoryRateLimiter } from '../../services/adapters/rateLimiter/memory.js';
import type { AppDeps } from '../../services/api/app.js';
import { createServer } from '../../services/api/server.js';
import { createMonitorService } from '../../services/application/monitors.js';
import { createSearchService } from '../../services/application/searches.js';
import { createWebhookService } from '../../services/application/webhooks.js';
import { type Core, openCore } from '../../services/compose/embedded/core.js';
import { loadConfig, tierShare } from '../../services/config/config.js';
import { createLocationResolver } from '../../services/geo/locations.js';
import { createMonitorVersions } from '../../services/monitors/monitorVersions.js';
import { type Resolver, systemResolver } from '../../services/webhooks/safety.js';
import { removeDir, tempDataDir } from './service.js';

export interface TestApp {
  app: FastifyInstance;
  core: Core;
  /** a fresh key of `tier` (raw value) */
  mintKey(tier?: string, limits?: { monthlyQuota?: number; rateLimitPerMin?: number }): Promise<string>;
}

/**
 * The HTTP app in this process over a fresh embedded data directory, for `app.inject` tests: no crawler and no
 * dispatcher, so submitted jobs stay queued. End-to-end behaviour is tested through a listening port (test/e2e).
 */
export const buildTestApp = async (
  t: Test,
  env: NodeJS.ProcessEnv = {},
  /** `dataDir`: an existing data directory (left in place); `renderElsewhere`: AppDeps' hook of that name */
  options: {
    dataDir?: string;
    renderElsewhere?: AppDeps['renderElsewhere'];
    onRoute?: (route: { method: string | string[]; url: string }) => void;
    /** how webhook hosts resolve (tests answer without DNS) */
    resolve?: Resolver;
  } = {},
): Promise<TestApp> => {
  const data = options.dataDir ?? tempDataDir('serp-app');
  const config = loadConfig(env, { dataDir: data });
  const core = await openCore(config);
  const locations = createLocationResolver(data);
  const rateLimiter = createMemoryRateLimiter();
  const searches = createSearchService({
    eventStore: core.eventStore,
    queries: core.queries,
    handle: core.handle,
    cacheTtlS: config.cacheTtlS,
    cacheScope: config.cacheScope,
    shareOf: tierShare(config.tiers),
  });
  const app = await createServer(
    {
      config,
      secrets: core.secrets,
      queries: core.queries,
      searches,
      keys: core.keys,
      adminSessions: core.adminSessions,
      monitors: createMonitorService({
        spreadMaxMs: config.monitorSpreadMaxS * 1000,
        queries: core.queries,
        handle: core.handle,
        projected: (position) => core.projector.waitFor(position),
        tiers: config.tiers,
        versions: createMonitorVersions(core.eventStore),
      }),
      webhooks: createWebhookService({
        queries: core.queries,
        handle: core.handle,
        projected: (position) => core.projector.waitFor(position),
        pepper: core.secrets.keyPepper,
        safety: { allowHttp: config.webhookAllowHttp, allowPrivate: config.webhookAllowPrivate },
        resolve: options.resolve ?? systemResolver,
      }),
      blobStore: core.blobStore,
      rateLimiter,
      projected: (position) => core.projector.waitFor(position),
      resolveLocation: (name) => locations.resolveLocation(name),
      suggestLocations: (name, limit) => locations.suggestLocations(name, limit),
      locations: {
        search: (query, limit) => locations.searchLocations(query, limit),
        byId: (id) => locations.locationById(id),
      },
      renderElsewhere: options.renderElsewhere,
    },
    { logLevel: 'warn', logger: false, onRoute: options.onRoute },
  );
  await app.ready();
  t.teardown(async () => {
    await app.close();
    await rateLimiter.close();
    locations.close();
    await core.close();
    if (!options.dataDir) removeDir(data);
  });
  return {
    app,
    core,
    async mintKey(tier = 'free', limits = {}) {
      const created = await core.keys.create({ tier, ...limits });
      if (created.position !== undefined) await core.projector.waitFor(created.position);
      return created.key;
    },
  };
};
