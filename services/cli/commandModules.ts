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
