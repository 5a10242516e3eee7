import { Command, InvalidArgumentError } from 'commander';
import { type ServeFlags, serve } from '../runtime/serve.js';
import { registerMaintenanceCommands } from './commands/admin.js';
import { registerSearchCommands } from './commands/batch.js';
import { registerClusterCommand } from './commands/cluster.js';
import { registerKeysCommand } from './commands/keys.js';
import { registerLocationsCommand } from './commands/locations.js';
import { registerMonitorsCommand } from './commands/monitors.js';
import { registerParseCommand } from './commands/parse.js';
import { registerReparseCommand } from './commands/reparse.js';

const port = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('port must be 0–65535');
  return n;
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
  .action((o: ServeFlags) => serve(o));

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
