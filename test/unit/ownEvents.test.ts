import { join } from 'node:path';
import t from 'tap';
import { streams } from '../../contracts/events.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { isAppendedHere, type RecordedEvent } from '../../services/ports/eventStore.js';
import { toProjected } from '../../services/projector/projector.js';
import { removeDir, tempDataDir } from '../support/service.js';

/**
 * The projector trusts the events this process appended itself (handed back from the SQLite store's memory) and
 * validates everything read from the log: another process's events, an older version's, a rebuild's.
 */
const collect = (store: ReturnType<typeof createSqliteEventStore>, count: number) =>
  new Promise<RecordedEvent[]>((resolve) => {
    const got: RecordedEvent[] = [];
    const sub = store.subscribeToAll(0, (batch) => {
      got.push(...batch);
      if (got.length >= count) void sub.stop().then(() => resolve(got));
    });
  });

t.test('own appends are trusted, the same events read from the file are validated', async (t) => {
  const dir = tempDataDir('serp-own-events');
  const path = join(dir, 'events.db');
  const here = createSqliteEventStore({ path, pollIntervalMs: 20 });
  const elsewhere = createSqliteEventStore({ path, pollIntervalMs: 20 });
  t.teardown(async () => {
    await here.close();
    await elsewhere.close();
    removeDir(dir);
  });
  const live = collect(here, 2);
  const stream = streams.apiKey('key_own');
  const issued = {
    keyId: 'key_own',
    keyHash: 'h'.repeat(64),
    prefix: 'sk_own',
    tier: 'free',
    monthlyQuota: 250,
    rateLimitPerMin: 10,
    label: 'own',
    issuedAt: new Date().toISOString(),
  };
  await here.appendToStream(stream, [{ type: 'ApiKeyIssued', data: issued }]);
  // an event the contract refuses (a quota that is not a number): what a foreign or corrupt writer could leave
  await here.appendToStream(stream, [{ type: 'ApiKeyIssued', data: { ...issued, monthlyQuota: 'lots' } }]);
  const mine = await live;
  const read = await collect(elsewhere, 2);

  t.ok(
    mine.every((e) => isAppendedHere(e)),
    'the appending process gets its events from memory, marked',
  );
  t.notOk(
    read.some((e) => isAppendedHere(e)),
    'another process reads them from the file, unmarked',
  );
  t.equal(toProjected(mine[0])?.data, mine[0].data, 'an own event is projected as it is, not parsed into a copy');
  t.same(toProjected(read[0])?.data, mine[0].data, 'read from the file, it validates to the same data');
  t.equal(toProjected(read[1]), undefined, 'read from the file, a non-conforming event is refused');
  t.ok(toProjected(mine[1]), 'appended here, it is trusted: only this version’s deciders write through this path');
});
