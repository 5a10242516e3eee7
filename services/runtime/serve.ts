import { announceAdminToken } from '../compose/dataDir.js';
import { startEmbedded } from '../compose/embedded/embedded.js';
import { type Config, ConfigError, loadConfig } from '../config/config.js';
import { type DistributedConfig, loadDistributedConfig, parseRoles } from '../config/distributed.js';
import { processEnv } from '../config/env.js';
import { boundHeapGrowth } from '../threads/heap.js';
import { describePortOwner } from '../threads/portOwner.js';

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

/**
 * the settings, or the process ends with one line per problem (exit 2): every problem at once, whichever loader found
 * it (the two parse the same schema, so a line they share is printed once)
 */
const settings = (flags: ServeFlags): { config: Config; dist?: DistributedConfig } => {
  const problems = new Set<string>();
  const load = <T>(loader: () => T): T | undefined => {
    try {
      return loader();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      for (const problem of err.problems) problems.add(problem);
      return undefined;
    }
  };
  const config = load(() => loadConfig(processEnv(), { port: flags.port, dataDir: flags.data, host: flags.host }));
  const dist = flags.role === undefined ? undefined : load(() => loadDistributedConfig(parseRoles(flags.role ?? '')));
  if (problems.size === 0 && config) return { config, dist };
  for (const problem of problems) console.error(`serp-api: config: ${problem}`);
  process.exit(2);
};

/**
 * A port another process holds, said as `cluster up` says it (docs/operations.md#exit-codes): which process
 * holds it and what it answers, and what to do; any other error as it is.
 */
const listenError = async (err: unknown, config: Config): Promise<unknown> => {
  if ((err as NodeJS.ErrnoException)?.code !== 'EADDRINUSE') return err;
  return new Error(
    `cannot listen on ${config.host}:${config.port}: the port is taken; ${await describePortOwner(config.port)}. Stop what holds it, or serve on another port (--port N or SERP_PORT; 0 takes a free one)`,
  );
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
    const svc = await startDistributed(config, dist).catch(async (err) => {
      throw await listenError(err, config);
    });
    for (const warning of svc.warnings) console.error(`serp-api: warning: ${warning}`);
    console.error(
      `serp-api ${dist.roles.join(',')} ${svc.app ? 'listening' : 'health'} on ${svc.url} (data: ${config.dataDir})`,
    );
    drainOnSignal(svc.close);
    return;
  }
  const svc = await startEmbedded(config).catch(async (err) => {
    throw await listenError(err, config);
  });
  announceAdminToken(config, svc.core);
  for (const warning of svc.warnings) console.error(`serp-api: warning: ${warning}`);
  console.error(`serp-api listening on ${svc.url} (data: ${config.dataDir})`);
  drainOnSignal(svc.close);
};
