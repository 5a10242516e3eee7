import type { Test } from 'tap';
import { composeApplication } from '../../services/compose/application.js';
import { openCore } from '../../services/compose/embedded/core.js';
import { loadConfig } from '../../services/config/config.js';
import { systemResolver } from '../../services/webhooks/commands/webhookSafety.js';
import { createWebhookService } from '../../services/webhooks/commands/webhooks.js';
import type { createDeliverer } from '../../services/webhooks/workers/deliverer.js';
import { createSender } from '../../services/webhooks/workers/sender.js';
import { removeDir, tempDataDir } from './service.js';

/**
 * A data directory of its own with the webhook service and a sender that may call 127.0.0.1, for the tests that drive
 * a deliverer by hand. `deliverer.set` hands it the deliverer they create, which the teardown stops before the stores
 * close. A test's own teardowns registered before this one run first (tap runs them in order).
 */
export const openWebhookCore = async (t: Test, opts: { name: string; timeoutMs: number; maxSockets: number }) => {
  const dataDir = tempDataDir(opts.name);
  const config = loadConfig({}, { dataDir });
  const core = await openCore(config);
  const { keys } = composeApplication(core, config);
  const safety = { allowHttp: true, allowPrivate: true };
  const sender = createSender({
    ...safety,
    resolve: systemResolver,
    timeoutMs: opts.timeoutMs,
    maxSockets: opts.maxSockets,
  });
  let deliverer: ReturnType<typeof createDeliverer> | undefined;
  t.teardown(async () => {
    await deliverer?.stop();
    sender.close();
    await core.close();
    removeDir(dataDir);
  });
  const projected = (p: number) => core.projector.waitFor(p);
  const service = createWebhookService({
    queries: core.queries,
    handle: core.handle,
    projected,
    pepper: core.secrets.keyPepper,
    safety,
    resolve: systemResolver,
  });
  /** a key of the tier, projected */
  const mintKey = async (label: string, tier = 'pro') => {
    const { keyId } = await keys.create({ tier, label });
    await projected(await core.eventStore.headPosition());
    return core.queries.keys.byId(keyId)!;
  };
  return {
    core,
    sender,
    service,
    projected,
    mintKey,
    deliverer: {
      set(d: ReturnType<typeof createDeliverer>) {
        deliverer = d;
      },
    },
  };
};
