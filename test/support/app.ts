import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import { createMemoryRateLimiter } from '../../services/adapters/rateLimiter/memory.js';
import type { AppDeps } from '../../services/api/app.js';
import { createServer } from '../../services/api/server.js';
import { type ApplicationServices, composeApi } from '../../services/compose/application.js';
import { type Core, openCore } from '../../services/compose/embedded/core.js';
import { loadConfig, tierShare } from '../../services/config/config.js';
import { createQueuePositions } from '../../services/fairShare/queuePosition.js';
import { createLocationResolver } from '../../services/geo/locations.js';
import type { Resolver } from '../../services/webhooks/commands/webhookSafety.js';
import { removeDir, tempDataDir } from './service.js';

export interface TestApp {
  app: FastifyInstance;
  core: Core;
  /** the application services the app was composed with (services/compose/application.ts) */
  services: ApplicationServices;
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
  const queuePositions = createQueuePositions({ ...core, laneMinShare: config.laneMinShare });
  await queuePositions.start();
  const deps = composeApi(
    {
      ...core,
      rateLimiter,
      locations,
      queuePositions,
      ...(options.resolve ? { resolveHost: options.resolve } : {}),
      ...(options.renderElsewhere ? { renderElsewhere: options.renderElsewhere } : {}),
    },
    config,
  );
  const app = await createServer(deps, { settings: config, logger: false, onRoute: options.onRoute });
  await app.ready();
  t.teardown(async () => {
    await app.close();
    await queuePositions.stop();
    await rateLimiter.close();
    locations.close();
    await core.close();
    if (!options.dataDir) removeDir(data);
  });
  return {
    app,
    core,
    services: deps,
    async mintKey(tier = 'free', limits = {}) {
      const created = await deps.keys.create({ tier, ...limits });
      if (created.position !== undefined) await core.projector.waitFor(created.position);
      return created.key;
    },
  };
};
