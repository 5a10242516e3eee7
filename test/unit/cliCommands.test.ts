import { Command } from 'commander';
import t from 'tap';
import { commandModules, commandSummaries } from '../../services/cli/commandModules.js';
import { asksTopLevelHelp, createProgram, withCommandSummaries } from '../../services/cli/program.js';

// services/cli/main.ts loads only the module of the command that runs: each name must be a command its module
// registers, and every command the modules register must be listed, or running it would load them all
t.test('cli › each top-level command loads the module that registers it, and every command is listed', async (t) => {
  const all = new Command('serp-api');
  for (const register of new Set(await Promise.all(Object.values(commandModules).map((load) => load())))) {
    register(all);
  }
  t.same(all.commands.map((c) => c.name()).sort(), Object.keys(commandModules).sort(), 'the table lists them all');
  for (const [name, load] of Object.entries(commandModules)) {
    const alone = new Command('serp-api');
    (await load())(alone);
    t.ok(
      alone.commands.some((c) => c.name() === name),
      `${name}: its module registers it`,
    );
  }
});

// `serp-api --help` prints the summaries instead of loading the modules (services/cli/program.ts): the same text
t.test('cli › the top-level help from the summaries is the help the registered commands give', async (t) => {
  const all = createProgram();
  for (const register of new Set(await Promise.all(Object.values(commandModules).map((load) => load())))) {
    register(all);
  }
  const quick = withCommandSummaries(createProgram());
  t.equal(quick.helpInformation(), all.helpInformation());
  t.same(
    commandSummaries.map((s) => s.term.split(' ')[0]),
    all.commands.slice(1).map((c) => c.name()),
    'one summary per command, in order',
  );
  t.ok(asksTopLevelHelp([]) && asksTopLevelHelp(['--help']) && asksTopLevelHelp(['-h']) && asksTopLevelHelp(['help']));
  t.notOk(asksTopLevelHelp(['keys', '--help']) || asksTopLevelHelp(['help', 'keys']), 'a command’s help loads it');
});
