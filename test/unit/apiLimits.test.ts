import Fastify from 'fastify';
import t from 'tap';
import type { ApiKeyDoc } from '../../projections/apiKeys/apiKeys.js';
import { createMemoryRateLimiter } from '../../services/adapters/rateLimiter/memory.js';
import { installErrorHandler } from '../../services/api/errors.js';
import { checkReadCeiling, checkSubmitRate } from '../../services/api/limits.js';

/**
 * A key's two ceilings (docs/api.md#limits): submits count against its rate a minute and say what is left in
 * RateLimit-* headers; reads count against max(600, 10 × rate); either refused is a 429 that says when to come back.
 */
const key = (rateLimitPerMin: number, keyId = 'key_a'): ApiKeyDoc => ({
  keyId,
  keyHash: `hash_${keyId}`,
  prefix: 'sk_test',
  tier: 'free',
  monthlyQuota: 1000,
  rateLimitPerMin,
  status: 'active',
  issuedAt: '2026-12-07T00:00:00.000Z',
});

const appWith = async (keys: Record<string, ApiKeyDoc>, now: () => number) => {
  const limiter = createMemoryRateLimiter(now);
  const app = Fastify();
  installErrorHandler(app);
  app.post<{ Querystring: { key: string } }>('/submit', async (req, reply) => {
    await checkSubmitRate(limiter, keys[req.query.key], reply);
    return { ok: true };
  });
  app.get<{ Querystring: { key: string } }>('/read', async (req) => {
    await checkReadCeiling(limiter, keys[req.query.key]);
    return { ok: true };
  });
  await app.ready();
  return app;
};

t.test('per-key limits › submits', async (t) => {
  let now = Date.parse('2026-12-07T10:00:15.000Z');
  const app = await appWith({ a: key(2), b: key(2, 'key_b') }, () => now);
  t.teardown(() => app.close());

  const first = await app.inject({ method: 'POST', url: '/submit?key=a' });
  t.equal(first.statusCode, 200, 'the first submit of the minute goes through');
  t.match(
    first.headers,
    { 'ratelimit-limit': '2', 'ratelimit-remaining': '1', 'ratelimit-reset': '45' },
    'and says the limit, what is left and when the window resets',
  );
  t.equal((await app.inject({ method: 'POST', url: '/submit?key=a' })).statusCode, 200, 'the second one too');

  const refused = await app.inject({ method: 'POST', url: '/submit?key=a' });
  t.equal(refused.statusCode, 429, 'the third in the same minute is refused');
  t.match(refused.json(), { code: 'SERP_RATE_LIMITED', detail: 'rate limit exceeded' }, 'with a code and a detail');
  t.match(
    refused.headers,
    { 'retry-after': '45', 'ratelimit-remaining': '0', 'ratelimit-limit': '2' },
    'and says when to try again',
  );
  t.equal(
    (await app.inject({ method: 'POST', url: '/submit?key=b' })).statusCode,
    200,
    'another key has a window of its own',
  );

  now += 45_000;
  t.equal((await app.inject({ method: 'POST', url: '/submit?key=a' })).statusCode, 200, 'the next minute lets it in');
});

t.test('per-key limits › reads have their own ceiling, max(600, 10 × rate)', async (t) => {
  const now = Date.parse('2026-12-07T10:00:00.000Z');
  const app = await appWith({ slow: key(1, 'key_slow'), fast: key(100, 'key_fast') }, () => now);
  t.teardown(() => app.close());

  const reads = async (k: string, n: number) => {
    const codes: number[] = [];
    for (let i = 0; i < n; i++) codes.push((await app.inject({ method: 'GET', url: `/read?key=${k}` })).statusCode);
    return codes;
  };
  const slow = await reads('slow', 601);
  t.equal(slow.filter((c) => c === 200).length, 600, 'a key of 1 a minute still polls 600 times a minute');
  t.equal(slow.at(-1), 429, 'and the 601st is refused');
  t.equal(
    (await app.inject({ method: 'POST', url: '/submit?key=slow' })).statusCode,
    200,
    'reads never use up the submit rate',
  );
  const fast = await reads('fast', 1001);
  t.equal(fast.filter((c) => c === 200).length, 1000, 'a key of 100 a minute reads 1,000 times a minute');
  const refused = await app.inject({ method: 'GET', url: '/read?key=fast' });
  t.equal(refused.headers['retry-after'], '60', 'a refused read says when the minute ends');
});
