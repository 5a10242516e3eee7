import t from 'tap';
import { createMemoryRateLimiter } from '../../services/adapters/rateLimiter/memory.js';
import { rateLimiterConformance } from './rateLimiterSuite.js';

t.test('MemoryRateLimiter › conformance', async (t) =>
  rateLimiterConformance(t, async () => {
    const limiter = createMemoryRateLimiter();
    return { limiter, cleanup: () => limiter.close() };
  }),
);

t.test('MemoryRateLimiter › a new minute opens a new window', async (t) => {
  let now = Date.UTC(2026, 10, 24, 12, 0, 30);
  const limiter = createMemoryRateLimiter(() => now);
  t.ok((await limiter.hit('k', 1)).allowed, 'first request');
  const refused = await limiter.hit('k', 1);
  t.notOk(refused.allowed, 'second in the same minute');
  t.equal(refused.resetSeconds, 30, 'resets at the top of the minute');
  now += 30_000;
  t.ok((await limiter.hit('k', 1)).allowed, 'allowed again in the next minute');
});
