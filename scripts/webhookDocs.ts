/**
 * Writes the table of webhook event types in docs/webhooks.md from the registry (services/webhooks/workers/eventTypes.ts).
 * `npm run docs:webhooks`; test/webhooks/workers/eventTypes.test.ts fails when the file is not what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withEventTypes } from '../services/webhooks/workers/docs.js';

const target = fileURLToPath(new URL('../docs/webhooks.md', import.meta.url));
writeFileSync(target, withEventTypes(readFileSync(target, 'utf8')));
console.log(`wrote ${target}`);
