import t from 'tap';
import { sleep } from '../../services/crawler/sleep.js';

/**
 * The crawler's waits (back-offs, cooldowns, pacing) end at once when the service drains (docs/operations.md): a
 * shutdown never sits out a two-minute cooldown.
 */
t.test('crawler sleep › waits, unless aborted', async (t) => {
  const t0 = performance.now();
  await sleep(30);
  t.ok(performance.now() - t0 >= 25, 'a wait lasts about as long as asked');

  const drain = new AbortController();
  const long = sleep(120_000, drain.signal);
  const aborted = performance.now();
  setImmediate(() => drain.abort());
  await t.rejects(long, { code: 'SERP_CRAWL_ABORTED' }, 'an abort ends a two-minute wait with the crawl’s abort error');
  t.ok(performance.now() - aborted < 5_000, 'at once, not after the wait');

  await t.rejects(
    sleep(120_000, drain.signal),
    { code: 'SERP_CRAWL_ABORTED' },
    'a wait begun after the abort never starts',
  );
});
