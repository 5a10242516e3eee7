/**
 * The rate limiters count whole clock minutes (services/adapters/rateLimiter): a test that counts requests against a
 * per-minute limit must not straddle a minute's end, or the count starts again half way. Waits, when fewer than
 * `needMs` are left in this minute, until just after the next one starts.
 */
export const withinOneMinute = async (needMs: number) => {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 60_000 - needMs) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 200));
};
