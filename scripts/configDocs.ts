/**
 * Writes docs/configuration.md from the configuration schema (services/config/schema.ts).
 * `npm run docs:config`; test/unit/configDocs.test.ts fails when the file is not what this writes.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderConfigurationDoc } from '../services/config/docs.js';

const target = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
writeFileSync(target, renderConfigurationDoc());
console.log(`wrote ${target}`);
