import t from 'tap';
import { createThreadShare } from '../../services/fairShare/threadShare.js';

t.test("ThreadShare › a worker's limit follows how busy its thread is", async (t) => {
  let busy = 0;
  const share = createThreadShare({ min: 8, max: 64, everyMs: 0, utilisation: () => busy });
  t.equal(share.limit(), 64, 'an idle thread: the whole pool');
  busy = 0.99;
  t.equal(share.limit(), 32, 'a saturated thread halves it');
  t.equal(share.limit(), 16);
  t.equal(share.limit(), 8);
  t.equal(share.limit(), 8, 'never below its minimum: the backlog still drains');
  busy = 0.7;
  t.equal(share.limit(), 8, 'between the bounds it holds');
  busy = 0.3;
  t.equal(share.limit(), 14, 'a thread with room gives it back a step at a time');
  for (let i = 0; i < 10; i++) share.limit();
  t.equal(share.limit(), 64, 'up to the pool, no further');
  t.equal(share.utilisation(), 0.3, 'the utilisation last measured');
});

t.test('ThreadShare › at its minimum on a thread still saturated, the worker also waits between starts', async (t) => {
  let busy = 0.99;
  const share = createThreadShare({ min: 4, max: 16, everyMs: 0, maxDelayMs: 8, utilisation: () => busy });
  t.equal(share.delay(), 0, 'narrowing first (16 → 8): no wait while the limit can still halve');
  t.equal(share.delay(), 0, '8 → 4, its minimum');
  t.equal(share.delay(), 1, 'at its minimum and still saturated: a millisecond between starts');
  t.equal(share.delay(), 2, 'doubling');
  t.equal(share.delay(), 4);
  t.equal(share.delay(), 8);
  t.equal(share.delay(), 8, 'never past its longest wait: the backlog still drains');
  busy = 0.7;
  t.equal(share.delay(), 8, 'between the bounds it holds');
  busy = 0.3;
  t.equal(share.delay(), 4, 'a thread with room halves it');
  t.equal(share.delay(), 2);
  t.equal(share.delay(), 1);
  t.equal(share.delay(), 0, 'then starts at once again');
  t.ok(share.limit() > 4, 'and the limit grows back meanwhile');
});

t.test('ThreadShare › measured on the thread itself, it narrows while the loop is kept busy', async (t) => {
  const share = createThreadShare({ min: 2, max: 64, everyMs: 20 });
  // a loop kept busy between short yields, as a worker with a backlog keeps it
  for (let i = 0; i < 10; i++) {
    const until = performance.now() + 25;
    while (performance.now() < until);
    await new Promise((r) => setImmediate(r));
    share.limit();
  }
  t.ok(share.limit() < 64, `narrowed to ${share.limit()} at a utilisation of ${share.utilisation().toFixed(2)}`);
});
