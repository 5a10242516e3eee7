import type { Command } from 'commander';

export type Register = (program: Command) => void;
/**
 * Each top-level command's module, loaded only when that command runs: a `keys create` loads the key commands and
 * what they use, not the server, the crawler or the cluster tooling (half of a short command's start-up). Help, or a
 * name not listed here, loads them all, so commander can list them and suggest the nearest.
 */
export const commandModules: Record<string, () => Promise<Register>> = {
  keys: async () => (await import('./commands/keys.js')).registerKeysCommand,
  cluster: async () => (await import('./commands/cluster.js')).registerClusterCommand,
  search: async () => (await import('./commands/batch.js')).registerSearchCommands,
  batch: async () => (await import('./commands/batch.js')).registerSearchCommands,
  retention: async () => (await import('./commands/admin.js')).registerMaintenanceCommands,
  projections: async () => (await import('./commands/admin.js')).registerMaintenanceCommands,
  audit: async () => (await import('./commands/admin.js')).registerMaintenanceCommands,
  locations: async () => (await import('./commands/locations.js')).registerLocationsCommand,
  monitors: async () => (await import('./commands/monitors.js')).registerMonitorsCommand,
  parse: async () => (await import('./commands/parse.js')).registerParseCommand,
  reparse: async () => (await import('./commands/reparse.js')).registerReparseCommand,
};

/**
 * Each command's line in the top-level help, in the order the modules register them: `serp-api --help` prints these
 * instead of loading every module (services/cli/program.ts). test/unit/cliCommands.test.ts checks that they are what
 * the modules register.
 */
export const commandSummaries: ReadonlyArray<{ term: string; description: string }> = [
  { term: 'keys', description: 'mint, list, revoke API keys and change their limits' },
  { term: 'cluster', description: 'a local distributed deployment on loopback' },
  {
    term: 'search [options] <keyword>',
    description: 'search one keyword on a running service and print the result (waits for it)',
  },
  {
    term: 'batch [options] <file>',
    description:
      'search every keyword of FILE (one per line; empty lines and # comments skipped) under the key’s rate, with a ' +
      'progress bar; results to --out as JSONL (whole results) or CSV (one row per organic result)',
  },
  { term: 'retention', description: 'data past SERP_RETENTION_DAYS' },
  { term: 'projections', description: 'read-model maintenance' },
  { term: 'audit', description: 'replay the log and check it against the read models' },
  { term: 'locations', description: 'geotargets used to resolve the `location` parameter' },
  { term: 'monitors', description: 'rank tracking: monitors that search keywords on a schedule' },
  { term: 'parse [options] <file>', description: 'parse a saved Google results page and print the result as JSON' },
  {
    term: 'reparse [options]',
    description: 're-parse stored raw HTML with the current parser and append SearchReparsed (no crawl, no quota)',
  },
];
