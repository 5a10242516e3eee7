import type { Command } from 'commander';
import { loadConfig } from '../../config/config.js';
import { processEnv } from '../../config/env.js';
import { importLocations } from '../../geo/locations.js';

/** `locations import FILE`: loads Google's geotargets CSV so `location` resolves cities, regions and the rest. */
export const registerLocationsCommand = (program: Command) => {
  program
    .command('locations')
    .description('geotargets used to resolve the `location` parameter')
    .command('import')
    .description(
      'load a Google Ads geotargets CSV (plain or .gz) into the data directory, replacing any earlier import',
    )
    .argument(
      '<file>',
      "geotargets CSV in Google's layout (Criteria ID,Name,Canonical Name,Parent ID,Country Code,Target Type,Status)",
    )
    .option('--data <dir>', 'data directory (SERP_DATA_DIR)')
    .action(async (file: string, o: { data?: string }) => {
      const { dataDir } = loadConfig(processEnv(), { dataDir: o.data });
      const { rows } = await importLocations(file, dataDir);
      console.log(`imported ${rows} geotargets into ${dataDir}`);
    });
};
