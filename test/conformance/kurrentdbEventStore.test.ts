import t from 'tap';
import { createKurrentDbEventStore, positionToNumber } from '../../services/adapters/eventStore/kurrentdb.js';
import { loadTestSettings } from '../../services/config/tests.js';
import { eventStoreConformance } from './eventStoreSuite.js';

t.test('KurrentDbEventStore › positions map exactly or not at all', async (t) => {
  t.equal(positionToNumber(0n), 0);
  t.equal(positionToNumber(9_007_199_254_740_991n), Number.MAX_SAFE_INTEGER, 'the largest exact position');
  t.throws(() => positionToNumber(9_007_199_254_740_992n), RangeError, 'past 2^53 the adapter refuses to round');
  t.throws(() => positionToNumber(-1n), RangeError);
});

// No KurrentDB/EventStoreDB server can run on this project's machines (no package, no container engine, no .NET):
// the suite runs when SERP_KURRENTDB_URL names one, e.g. kurrentdb://127.0.0.1:2113?tls=false (docs/distributed.md).
// The skip is listed in test/skips.json (docs/testing.md).
const url = loadTestSettings().kurrentdbUrl;
t.test(
  'KurrentDbEventStore › conformance',
  { skip: url ? false : 'needs a KurrentDB server at SERP_KURRENTDB_URL (none can run here)' },
  (t) =>
    eventStoreConformance(t, async () => ({
      connect: async () => createKurrentDbEventStore({ connectionString: url ?? '', pollIntervalMs: 100 }),
      cleanup: async () => undefined,
    })),
);
