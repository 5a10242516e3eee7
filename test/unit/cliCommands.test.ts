import { Command } from 'commander';
import t from 'tap';
import { commandModules } from '../../services/cli/commandModules.js';

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
