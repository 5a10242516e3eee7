// Spawned by sqliteCrash.test.ts: appends from 20 concurrent writers until killed, printing one line per
// acknowledged append. A line on stdout is a promise that the append is durable.
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';

const [file] = process.argv.slice(2);
if (!file) throw new Error('usage: sqliteCrashChild.ts <database file>');
const store = createSqliteEventStore({ path: file });
// Big enough to span several pages, so a torn write would show as a truncated or unparsable payload.
const payload = 'x'.repeat(6000);

const writer = async (w: number) => {
  const stream = `crash-${w}`;
  for (let version = 0; ; version += 1) {
    const result = await store.appendToStream(
      stream,
      [{ type: 'Appended', data: { w, version, payload }, metadata: { correlationId: `w${w}-v${version}` } }],
      { expectedVersion: version === 0 ? 'no_stream' : version - 1 },
    );
    process.stdout.write(`${stream} ${result.nextExpectedVersion} ${result.lastGlobalPosition}\n`);
  }
};

await Promise.all(Array.from({ length: 20 }, (_, w) => writer(w)));
