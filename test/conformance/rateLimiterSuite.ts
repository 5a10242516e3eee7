import type { Test } from 'tap';
import type { RateLimiter } from '../../services/ports/rateLimiter.js';

export interface RateLimiterFixture {
  limiter: RateLimiter;
  cleanup(): Promise<void>;
}

/**
 * What every RateLimiter adapter must do (services/ports/rateLimiter.ts). Buckets are unique per run, so an adapter
 * whose counts outlive the fixture (a shared KV bucket) cannot leak one test into the next. A test may straddle a
 * minute boundary, so counts are checked within what one window can allow.
 */
export const rateLimiterConformance = async (t: Test, make: () => Promise<RateLimiterFixture>) => {
  let n = 0;
  const bucket = (name: string) => `${name}:${process.pid}:${Date.now().toString(36)}:${n++}`;
  const withLimiter = async (body: (limiter: RateLimiter) => Promise<void>) => {
    const { limiter, cleanup } = await make();
    try {
      await body(limiter);
    } finally {
      await cleanup();
    }
  };

  await t.test('RateLimiter › allows up to the limit, then refuses with a reset time', (t) =>
    withLimiter(async (limiter) => {
      const b = bucket('limit');
      const decisions = [];
      for (let i = 0; i < 5; i++) decisions.push(await limiter.hit(b, 3));
      const allowed = decisions.filter((d) => d.allowed).length;
      // three in one window; a minute boundary in the middle may allow up to three more
      t.ok(allowed >= 3 && allowed <= 5, `allowed ${allowed} of 5 at a limit of 3`);
      t.same(
        decisions.slice(0, 3).map((d) => d.limit),
        [3, 3, 3],
        'each decision carries the limit',
      );
      t.same(
        decisions.slice(0, 3).map((d) => d.remaining),
        [2, 1, 0],
        'remaining counts down from limit - 1',
      );
      const refused = decisions.find((d) => !d.allowed);
      if (allowed === 3) {
        t.ok(refused, 'the fourth is refused');
        t.equal(refused?.remaining, 0, 'a refusal has nothing remaining');
      }
      for (const d of decisions) t.ok(d.resetSeconds >= 1 && d.resetSeconds <= 60, 'reset within the minute');
    }),
  );

  await t.test('RateLimiter › buckets are counted apart', (t) =>
    withLimiter(async (limiter) => {
      const a = bucket('a');
      const b = bucket('b');
      t.ok((await limiter.hit(a, 1)).allowed, 'first of a');
      t.ok((await limiter.hit(b, 1)).allowed, 'first of b is not counted against a');
    }),
  );

  await t.test('RateLimiter › hitNow: decided at once, exact within one process', (t) =>
    withLimiter(async (limiter) => {
      const b = bucket('now');
      const decisions = Array.from({ length: 5 }, () => limiter.hitNow(b, 3));
      const allowed = decisions.filter((d) => d.allowed).length;
      t.ok(allowed >= 3 && allowed <= 5, `allowed ${allowed} of 5 at a limit of 3`);
      t.same(
        decisions.slice(0, 3).map((d) => [d.limit, d.remaining]),
        [
          [3, 2],
          [3, 1],
          [3, 0],
        ],
        'each carries the limit, and remaining counts down from limit - 1',
      );
      if (allowed === 3)
        t.same(decisions[3], { ...decisions[3], allowed: false, remaining: 0 }, 'the fourth is refused');
      t.ok(limiter.hitNow(bucket('other'), 1).allowed, 'another bucket is counted apart');
    }),
  );

  await t.test('RateLimiter › concurrent hits never overshoot the limit', (t) =>
    withLimiter(async (limiter) => {
      const b = bucket('race');
      const decisions = await Promise.all(Array.from({ length: 40 }, () => limiter.hit(b, 10)));
      const allowed = decisions.filter((d) => d.allowed).length;
      t.ok(allowed >= 10 && allowed <= 20, `allowed ${allowed} of 40 racing hits at a limit of 10`);
    }),
  );
};
