import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { RateDecision, RateLimiter } from '../../ports/rateLimiter.js';
import { StoreUnavailableError } from '../../ports/unavailable.js';

interface Waiter {
  limit: number;
  resolve: (d: RateDecision) => void;
  reject: (err: unknown) => void;
}

/**
 * Per-key request ceilings shared by every api process (docs/distributed.md#the-other-nats-adapters): one NATS KV entry
 * per bucket and minute, counted with compare-and-set (create for the first hit, update at the read revision after), so
 * racing api processes never overshoot a limit. Entries expire with the KV bucket's max age (two minutes).
 *
 * Inside one process the hits on a bucket queue up and are counted together: one compare-and-set takes every hit
 * waiting, so a burst costs a few round trips instead of a retry storm; only other processes can make it retry.
 * Windows follow each api's clock: keep the api hosts' clocks in sync (NTP), as any fixed-window limiter needs.
 */
export const createNatsKvRateLimiter = async (options: {
  nc: NatsConnection;
  /** KV bucket (default serp_rate) */
  bucket?: string;
  replicas?: number;
  ownsConnection?: boolean;
  now?: () => number;
  /**
   * how long the requests that create the bucket and find its stream's leader wait (default 15 s); the caller tries
   * again when one gets no answer (docs/distributed.md#a-cluster-on-one-machine)
   */
  setupTimeoutMs?: number;
}): Promise<RateLimiter> => {
  const now = options.now ?? Date.now;
  const bucketName = options.bucket ?? 'serp_rate';
  const config = { history: 1, ttl: 120_000, replicas: options.replicas ?? 1 };
  if (options.setupTimeoutMs !== undefined) {
    // a stream another process has just created answers nothing until its leader is elected: asked with a short
    // wait (and again), the bucket below then finds it answering
    const timeout = options.setupTimeoutMs;
    await new Kvm(jetstream(options.nc, { timeout })).create(bucketName, config);
    await (await jetstreamManager(options.nc, { timeout, checkAPI: false })).streams.info(`KV_${bucketName}`);
  }
  const kv = await new Kvm(jetstream(options.nc, { timeout: 15_000 })).create(bucketName, config);
  const keyOf = (bucket: string, window: number) =>
    `${Buffer.from(bucket, 'utf8').toString('base64url') || '_'}.${window}`;
  const lanes = new Map<string, Waiter[]>();

  const settle = async (key: string, resetSeconds: number, waiters: Waiter[]) => {
    for (let attempt = 0; ; attempt++) {
      const entry = await kv.get(key);
      const live = entry && entry.operation === 'PUT';
      let count = live ? Number(entry.string()) || 0 : 0;
      const decisions = waiters.map((w) => {
        if (count >= w.limit) return { allowed: false, limit: w.limit, remaining: 0, resetSeconds };
        count++;
        return { allowed: true, limit: w.limit, remaining: w.limit - count, resetSeconds };
      });
      try {
        if (decisions.some((d) => d.allowed)) {
          if (live) await kv.update(key, String(count), entry.revision);
          else await kv.create(key, String(count));
        }
        for (const [i, w] of waiters.entries()) w.resolve(decisions[i]);
        return;
      } catch (err) {
        // another api process counted first: read again, after a short jittered pause
        if (!/wrong last sequence|10071|key exists/i.test(String((err as Error).message)) || attempt > 200) throw err;
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 + attempt * 2)));
      }
    }
  };

  const drain = async (key: string, resetSeconds: number) => {
    const queue = lanes.get(key)!;
    try {
      while (queue.length > 0) {
        const waiters = queue.splice(0, queue.length);
        await settle(key, resetSeconds, waiters).catch((err) => {
          for (const w of waiters) w.reject(new StoreUnavailableError('rate limiter (NATS KV)', err));
        });
      }
    } finally {
      lanes.delete(key);
    }
  };

  return {
    hit(bucket, limit) {
      const t = now();
      const window = Math.floor(t / 60_000);
      const resetSeconds = Math.max(1, Math.ceil(((window + 1) * 60_000 - t) / 1000));
      const key = keyOf(bucket, window);
      return new Promise<RateDecision>((resolve, reject) => {
        const queue = lanes.get(key);
        if (queue) queue.push({ limit, resolve, reject });
        else {
          lanes.set(key, [{ limit, resolve, reject }]);
          void drain(key, resetSeconds);
        }
      });
    },
    async close() {
      if (options.ownsConnection && !options.nc.isClosed()) await options.nc.drain();
    },
  };
};
