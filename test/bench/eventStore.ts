// Appends per second on the SQLite event store: one writer waiting for each fsync, against 50 concurrent writers whose
// appends group-commit, over two rounds with the first side alternated (compare.ts). Prints figures; asserts nothing
// (timings depend on the disk). Run: npx tsx test/bench/eventStore.ts [seconds per run, default 3]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { alternate, machineNote, printRatio, total } from './compare.js';

const seconds = Number(process.argv[2] ?? 3);
const event = {
  type: 'QuotaReserved',
  data: { jobId: '0123456789abcdef01234567' },
  metadata: { correlationId: 'bench' },
};

const run = async (writers: number) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serp-es-bench-'));
  const store = createSqliteEventStore({ path: path.join(dir, 'events.db') });
  try {
    const until = Date.now() + seconds * 1000;
    const started = process.hrtime.bigint();
    // Each writer owns a stream and always passes the expected version, as the command handler does.
    const writer = async (w: number) => {
      for (let version = -1; Date.now() < until; version += 1) {
        await store.appendToStream(`usage-bench${w}-202601`, [event], {
          expectedVersion: version === -1 ? 'no_stream' : version,
        });
      }
    };
    await Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
    const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
    const { appends, commits } = store.stats();
    return { writers, appends, commits, perSecond: appends / elapsed, perCommit: appends / commits };
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
};

const sides = await alternate(2, { one: () => run(1), fifty: () => run(50) });
console.log(
  `SQLite event store, WAL + synchronous=FULL, ${seconds} s per run, one event per append, ${os.tmpdir()}; ${machineNote()}`,
);
console.log('writers  appends/s  appends  commits  appends/commit');
for (const r of [...sides.one, ...sides.fifty]) {
  console.log(
    `${String(r.writers).padStart(7)}  ${r.perSecond.toFixed(0).padStart(9)}  ${String(r.appends).padStart(7)}  ${String(r.commits).padStart(7)}  ${r.perCommit.toFixed(1).padStart(14)}`,
  );
}
// an append that fails throws and ends the run: a figure here has no failures under it
const figure = (runs: { perSecond: number }[]) => total(runs.map((r) => ({ value: r.perSecond, failures: 0 })));
printRatio('group commit speed-up, 50 writers / 1 writer', figure(sides.fifty), figure(sides.one));
