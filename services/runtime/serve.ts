import { announceAdminToken } from '../cli/dataDir.js';
import { startEmbedded } from '../compose/embedded/embedded.js';
import { type Config, ConfigError, loadConfig } from '../config/config.js';
import { type DistributedConfig, loadDistributedConfig, parseRoles } from '../config/distributed.js';
import { processEnv } from '../config/env.js';
import { boundHeapGrowth } from './heap.js';

/** `serp-api serve`'s flags (they win over SERP_PORT, SERP_HOST, SERP_DATA_DIR) */
export interface ServeFlags {
  port?: number;
  host?: string;
  data?: string;
  /** distributed mode: the roles of this process (`api,crawler`); absent: embedded */
  role?: string;
}

/** SIGINT or SIGTERM: drain (`close`), then exit 0, or 1 when draining failed */
const drainOnSignal = (close: () => Promise<void>) => {
  const stop = (signal: string) => {
    console.error(`${signal}: draining`);
    close().then(
      () => process.exit(0),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
};

/** the settings, or the process ends with one line per problem (exit 2) */
const settings = (flags: ServeFlags): { config: Config; dist?: DistributedConfig } => {
  try {
    const config = loadConfig(processEnv(), { port: flags.port, dataDir: flags.data, host: flags.host });
    return flags.role === undefined ? { config } : { config, dist: loadDistributedConfig(parseRoles(flags.role)) };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const problem of err.problems) console.error(`serp-api: config: ${problem}`);
    process.exit(2);
  }
};

/**
 * A serving process (docs/architecture.md, "Processes"): `serp-api serve` runs every role in this process (embedded
 * mode: its threads are the HTTP event loop, the pipeline thread, the event store's writer, the parse pool and the
 * hash thread), `serp-api serve --role …` the roles asked for (distributed mode). It runs until SIGINT or SIGTERM,
 * then drains.
 */
export const serve = async (flags: ServeFlags): Promise<void> => {
  const { config, dist } = settings(flags);
  boundHeapGrowth(config.heapGrowingPercent);
  if (dist) {
    // distributed mode's clients (NATS, KurrentDB's gRPC) load only here: an embedded service never holds them
    const { startDistributed } = await import('../compose/distributed/distributed.js');
    const svc = await startDistributed(config, dist);
    for (const warning of svc.warnings) console.error(`serp-api: warning: ${warning}`);
    console.error(
      `serp-api ${dist.roles.join(',')} ${svc.app ? 'listening' : 'health'} on ${svc.url} (data: ${config.dataDir})`,
    );
    drainOnSignal(svc.close);
    return;
  }
  const svc = await startEmbedded(config);
  announceAdminToken(config, svc.core);
  for (const warning of svc.warnings) console.error(`serp-api: warning: ${warning}`);
  console.error(`serp-api listening on ${svc.url} (data: ${config.dataDir})`);
  drainOnSignal(svc.close);
};
