import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { RateLimiter } from '../../ports/rateLimiter.js';

/**
 * Per-key request ceilings shared by every api process (DESIGN.md §2, distributed mode): one NATS KV entry per
 * bucket and minute, counted with compare-and-set (create for the first hit, update at the read revision after), so
 * racing api processes never overshoot a limit. Entries expire with the bucket's max age (two minutes).
 * Windows follow each api's clock: keep the api hosts' clocks in sync (NTP), as any fixed-window limiter needs.
 */
export const createNatsKvRateLimiter = async (options: {
  nc: NatsConnection;
  /** KV bucket (default serp_rate) */
  bucket?: string;
  replicas?: number;
  ownsConnection?: boolean;
  now?: () => number;
}): Promise<RateLimiter> => {
  const now = options.now ?? Date.now;
  const kv = await new Kvm(options.nc).create(options.bucket ?? 'serp_rate', {
    history: 1,
    ttl: 120_000,
    replicas: options.replicas ?? 1,
  });
  const keyOf = (bucket: string, window: number) =>
    `${Buffer.from(bucket, 'utf8').toString('base64url') || '_'}.${window}`;

  return {
    async hit(bucket, limit) {
      const t = now();
      const window = Math.floor(t / 60_000);
      const resetSeconds = Math.max(1, Math.ceil(((window + 1) * 60_000 - t) / 1000));
      const key = keyOf(bucket, window);
      for (let attempt = 0; attempt < 100; attempt++) {
        const entry = await kv.get(key);
        const count = entry && entry.operation === 'PUT' ? Number(entry.string()) || 0 : 0;
        if (count >= limit) return { allowed: false, limit, remaining: 0, resetSeconds };
        try {
          if (entry && entry.operation === 'PUT') await kv.update(key, String(count + 1), entry.revision);
          else await kv.create(key, String(count + 1));
          return { allowed: true, limit, remaining: limit - count - 1, resetSeconds };
        } catch (err) {
          // another api process counted first: read again
          if (!/wrong last sequence|10071|key exists/i.test(String((err as Error).message))) throw err;
        }
      }
      throw new Error(`rate limiter: bucket ${bucket} too contended`);
    },
    async close() {
      if (options.ownsConnection && !options.nc.isClosed()) await options.nc.drain();
    },
  };
};
