import t from 'tap';
import { createMemoryRateLimiter } from '../../services/adapters/rateLimiter/memory.js';
import type { AppDeps } from '../../services/api/app.js';
import { createServer } from '../../services/api/server.js';
import { composeApi } from '../../services/compose/application.js';
import { openCore } from '../../services/compose/embedded/core.js';
import { loadConfig } from '../../services/config/config.js';
import { createLocationResolver } from '../../services/geo/locations.js';
import { removeDir, tempDataDir } from '../support/service.js';

/**
 * The application is composed in one place (services/compose/application.ts) for every mode; a route whose service
 * a composition left out stops the start with an error that names it, where it used to register nothing and answer
 * 404 (docs/architecture.md#composition).
 */
t.test('wiring › a route whose service is missing fails the start, naming the routes and the service', async (t) => {
  const data = tempDataDir('serp-wiring');
  const config = loadConfig({}, { dataDir: data });
  const core = await openCore(config);
  const locations = createLocationResolver(data);
  const rateLimiter = createMemoryRateLimiter();
  t.teardown(async () => {
    await rateLimiter.close();
    locations.close();
    await core.close();
    removeDir(data);
  });
  const deps = composeApi({ ...core, rateLimiter, locations }, config);
  const cases = [
    { service: 'monitors', routes: '/v1/monitors', name: 'monitor service' },
    { service: 'webhooks', routes: '/v1/webhooks', name: 'webhook service' },
  ] as const;
  for (const { service, routes, name } of cases) {
    const { [service]: _left, ...without } = deps;
    const start = async () => {
      const app = await createServer(without as AppDeps, { settings: config, logger: false });
      await app.ready();
      return app;
    };
    await t.rejects(
      start(),
      { name: 'MissingServiceError', code: 'SERP_API_MISSING_SERVICE', message: `${routes}: no ${name} was given` },
      `without ${service}: the start fails`,
    );
  }
  const app = await createServer(deps, { settings: config, logger: false });
  t.teardown(() => app.close());
  for (const url of ['/v1/monitors', '/v1/webhooks']) {
    t.equal((await app.inject({ url })).statusCode, 401, `composed: ${url} exists (401 without a key, not 404)`);
  }
});
