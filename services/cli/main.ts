import { Command, InvalidArgumentError } from 'commander';
import { startEmbedded } from '../compose/embedded/embedded.js';
import { loadConfig } from '../config/config.js';
import { ConfigError, loadDistributedConfig, parseRoles } from '../config/distributed.js';
import { boundHeapGrowth } from '../runtime/heap.js';
import { registerMaintenanceCommands } from './commands/admin.js';
import { registerSearchCommands } from './commands/batch.js';
import { registerClusterCommand } from './commands/cluster.js';
import { registerKeysCommand } from './commands/keys.js';
import { registerLocationsCommand } from './commands/locations.js';
import { registerMonitorsCommand } from './commands/monitors.js';
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

/**
 * `serp-api search … | head`: once the reader has gone, a write fails with EPIPE; the output is no longer wanted, so
 * the CLI ends quietly (exit 0), as Unix tools do, instead of dying with a stack trace.
 */
const quietOnClosedPipe = (stream: NodeJS.WriteStream) =>
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
quietOnClosedPipe(process.stdout);

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
    const config = loadConfig(process.env, { port: o.port, dataDir: o.data, host: o.host });
    boundHeapGrowth(config.heapGrowingPercent);
    if (o.role !== undefined) {
      let dist: ReturnType<typeof loadDistributedConfig>;
      try {
        dist = loadDistributedConfig(process.env, parseRoles(o.role));
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        for (const problem of err.problems) console.error(`serp-api: config: ${problem}`);
        process.exit(2);
      }
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
  });

registerKeysCommand(program);
registerClusterCommand(program);
registerSearchCommands(program);
registerMaintenanceCommands(program);
registerLocationsCommand(program);
registerMonitorsCommand(program);
registerParseCommand(program);
registerReparseCommand(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(`serp-api: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
