import { commandModules } from './commandModules.js';
import { asksTopLevelHelp, createProgram, withCommandSummaries } from './program.js';

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

const program = createProgram();

const registerCommands = async () => {
  if (asksTopLevelHelp(process.argv.slice(2))) {
    withCommandSummaries(program);
    return;
  }
  const asked = commandModules[process.argv[2] ?? ''];
  const loaders = asked ? [asked] : Object.values(commandModules);
  for (const register of new Set(await Promise.all(loaders.map((load) => load())))) register(program);
};

registerCommands()
  .then(() => program.parseAsync(process.argv))
  .catch(async (err: unknown) => {
    // a setting that cannot work (a short secret in secrets.json, in any mode): one line each, exit 2, as serve says it
    // (imported here, not above: the configuration schema, zod included, loads in about the time the whole help takes)
    const { ConfigError } = await import('../config/config.js');
    if (err instanceof ConfigError) {
      for (const problem of err.problems) console.error(`serp-api: config: ${problem}`);
      process.exit(2);
    }
    console.error(`serp-api: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
