import { Command, InvalidArgumentError } from 'commander';
import { ConfigError } from '../config/config.js';
import type { ServeFlags } from '../runtime/serve.js';
import { commandModules } from './commandModules.js';

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
  .action(async (o: ServeFlags) => (await import('../runtime/serve.js')).serve(o));

const registerCommands = async () => {
  const asked = commandModules[process.argv[2] ?? ''];
  const loaders = asked ? [asked] : Object.values(commandModules);
  for (const register of new Set(await Promise.all(loaders.map((load) => load())))) register(program);
};

registerCommands()
  .then(() => program.parseAsync(process.argv))
  .catch((err: unknown) => {
    // a setting that cannot work (a short secret in secrets.json, in any mode): one line each, exit 2, as serve says it
    if (err instanceof ConfigError) {
      for (const problem of err.problems) console.error(`serp-api: config: ${problem}`);
      process.exit(2);
    }
    console.error(`serp-api: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
