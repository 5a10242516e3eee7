import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { streams } from '../../contracts/events.js';
import { usageDecider } from '../../domain/usage/usage.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createCommandHandler } from '../../services/application/commandHandler.js';
import { createOwnWrites } from '../../services/projector/ownWrites.js';

const now = '2026-12-07T10:00:00.000Z';
const reserve = (keyId: string, jobId: string) =>
  ({ type: 'ReserveQuota', keyId, month: '202612', jobId, monthlyQuota: 0, now }) as const;

/**
 * A real event store and command handler; the projection on "another thread" is a position moved by hand, so that the
 * lag between an append and its projection is decided by the test, not by timing.
 */
const setUp = (t: Test, maxWaitMs?: number) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-own-writes-'));
  const store = createSqliteEventStore({ path: join(dir, 'events.db') });
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  let projectedTo = 0;
  const waiters: { position: number; resolve: () => void }[] = [];
  const projectTo = (position: number) => {
    projectedTo = position;
    for (const w of waiters.filter((x) => x.position <= position)) w.resolve();
  };
  const ownWrites = createOwnWrites(
    (position) =>
      position <= projectedTo ? Promise.resolve() : new Promise((resolve) => waiters.push({ position, resolve })),
    maxWaitMs,
  );
  const handle = ownWrites.tracking(createCommandHandler(store));
  return { handle, ownWrites, projectTo };
};

/** whether `p` has settled by the time the queued callbacks ran */
const settledYet = async (p: Promise<void>) => {
  let done = false;
  void p.then(() => {
    done = true;
  });
  await new Promise((r) => setImmediate(r));
  return done;
};

t.test("own writes › a read waits until its own key's appends are projected, and not for other keys'", async (t) => {
  const { handle, ownWrites, projectTo } = setUp(t);
  const a = await handle(streams.usage('key-a', '202612'), usageDecider, reserve('key-a', 'j1'));
  const b = await handle(streams.usage('key-b', '202612'), usageDecider, reserve('key-b', 'j2'));
  t.ok(a.position! < b.position!, "key B's append comes after key A's");

  const readA = ownWrites.settled('key-a');
  t.notOk(await settledYet(readA), "key A's read waits while its reservation is not projected");
  projectTo(a.position!);
  t.ok(await settledYet(readA), "key A's read answers once its own append is projected, before key B's is");
  t.ok(await settledYet(ownWrites.settled('key-a')), 'and the next one does not wait at all');

  const readB = ownWrites.settled('key-b');
  t.notOk(await settledYet(readB), "key B's read still waits for key B's reservation");
  projectTo(b.position!);
  t.ok(await settledYet(readB), 'until that is projected');
  t.ok(await settledYet(ownWrites.settled('key-c')), 'a key this process never wrote for does not wait');
});

t.test('own writes › a later append of the key moves what its reads wait for', async (t) => {
  const { handle, ownWrites, projectTo } = setUp(t);
  const first = await handle(streams.usage('key-a', '202612'), usageDecider, reserve('key-a', 'j1'));
  const second = await handle(streams.usage('key-a', '202612'), usageDecider, reserve('key-a', 'j2'));
  const read = ownWrites.settled('key-a');
  projectTo(first.position!);
  t.notOk(await settledYet(read), 'the first reservation projected is not enough: the second was answered too');
  projectTo(second.position!);
  t.ok(await settledYet(read), 'both projected: the read answers');
});

t.test('own writes › a projection that does not come holds a read no longer than its bound', async (t) => {
  const { handle, ownWrites } = setUp(t, 50);
  await handle(streams.usage('key-a', '202612'), usageDecider, reserve('key-a', 'j1'));
  const t0 = performance.now();
  await ownWrites.settled('key-a');
  const took = performance.now() - t0;
  t.ok(took >= 45, `it waited its bound (${took.toFixed(0)} ms)`);
  t.ok(took < 2_000, 'and then answered from what is projected');
});
