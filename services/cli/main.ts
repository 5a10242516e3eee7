import { Command, InvalidArgumentError } from 'commander';
import { loadConfig } from '../compose/config.js';
import { ConfigError, loadDistributedConfig, parseRoles } from '../compose/distributedConfig.js';
import { startEmbedded } from '../compose/embedded.js';
import { boundHeapGrowth } from '../compose/heap.js';
import { registerMaintenanceCommands } from './commands/admin.js';
import { registerSearchCommands } from './commands/batch.js';
import { registerClusterCommand } from './commands/cluster.js';
import { registerKeysCommand } from './commands/keys.js';
import { registerLocationsCommand } from './commands/locations.js';
import { registerParseCommand } from './commands/parse.js';
import { registerReparseCommand } from './commands/reparse.js';
import { announceAdminToken } from './dataDir.js';

const port = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('port must be 0–65535');
  return n;
};

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

const program = new Command('serp-api')
  .description('Live Google search results as clean JSON: native /v1 API, SerpApi-compatible surface, MCP server')
  .showHelpAfterError();

program
  .command('serve')
  .description(
    'run the service: every role in one process (embedded mode: SQLite, in-process queue, files), or with --role ' +
      'the given roles of a distributed deployment (SERP_EVENTSTORE_URL, SERP_NATS_URL)',
  )
  .option('--port <port>', 'port to listen on (SERP_PORT, default 8080)', port)
  .option('--host <host>', 'address to bind (SERP_HOST, default 127.0.0.1)')
  .option('--data <dir>', 'data directory (SERP_DATA_DIR, default ./.data)')
  .option('--role <roles>', 'distributed mode: api, crawler, dispatcher, projector, or a comma list of them')
  .action(async (o: { port?: number; host?: string; data?: string; role?: string }) => {
    // every problem of the settings is reported at once, one line each, whichever loader found it
    const problems = new Set<string>();
    const settings = <T>(load: () => T): T | undefined => {
      try {
        return load();
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        for (const problem of err.problems) problems.add(problem);
        return undefined;
      }
    };
    const config = settings(() => loadConfig(process.env, { port: o.port, dataDir: o.data, host: o.host }));
    const dist =
      o.role === undefined ? undefined : settings(() => loadDistributedConfig(process.env, parseRoles(o.role ?? '')));
    if (problems.size > 0 || !config) throw new ConfigError([...problems]);
    boundHeapGrowth(config.heapGrowingPercent);
    if (dist) {
      // distributed mode's clients (NATS, KurrentDB's gRPC) load only here: an embedded service never holds them
      const { startDistributed } = await import('../compose/distributed.js');
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
  });

registerKeysCommand(program);
registerClusterCommand(program);
registerSearchCommands(program);
registerMaintenanceCommands(program);
registerLocationsCommand(program);
registerParseCommand(program);
registerReparseCommand(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  // a setting that cannot work (a short secret, in any mode): one line each, exit 2, as distributed mode says it
  if (err instanceof ConfigError) {
    for (const problem of err.problems) console.error(`serp-api: config: ${problem}`);
    process.exit(2);
  }
  console.error(`serp-api: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
