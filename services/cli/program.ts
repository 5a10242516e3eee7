import { Command, Help, InvalidArgumentError } from 'commander';
import type { ServeFlags } from '../runtime/serve.js';
import { commandSummaries } from './commandModules.js';

const port = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('port must be 0–65535');
  return n;
};

/** The `serp-api` program with `serve`, the one command main.ts always registers itself (its module is the server). */
export const createProgram = (): Command => {
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
  return program;
};

/**
 * The top-level help (`serp-api --help`, or no command) from the summaries in commandModules.ts instead of the
 * command modules: loading them all is most of a help's time (`npx serp-api --help` was 2 s on a loaded machine).
 * test/unit/cliCommands.test.ts checks that this help is the one the registered commands give.
 */
export const withCommandSummaries = (program: Command): Command => {
  const terms = new Map<Command, string>();
  for (const { term, description } of commandSummaries) {
    terms.set(program.command(term.split(' ')[0]!).description(description), term);
  }
  return program.configureHelp({
    subcommandTerm(cmd) {
      return terms.get(cmd) ?? Help.prototype.subcommandTerm.call(this, cmd);
    },
  });
};

/** true when the arguments ask for the top-level help and nothing else */
export const asksTopLevelHelp = (args: readonly string[]): boolean =>
  args.length === 0 || (args.length === 1 && ['--help', '-h', 'help'].includes(args[0]!));
