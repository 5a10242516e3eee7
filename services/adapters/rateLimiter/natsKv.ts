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
 * `hitNow` counts here first and shares in the background, so a read never waits on NATS; the api fleet may then admit
 * more than the limit by what the other processes admitted in the last `shareEveryMs` and one round trip.
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
  /** how often `hitNow`'s local counts are added to the shared ones, at most (default 100 ms) */
  shareEveryMs?: number;
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
  const lostRace = (err: unknown) => /wrong last sequence|10071|key exists/i.test(String((err as Error).message));
  const pause = (attempt: number) => new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 + attempt * 2)));

  /**
   * One compare-and-set on a key's count: `next` gets the count as read and answers the count to write (undefined:
   * write nothing); when another api process wrote first, the count is read again after a short jittered pause.
   * Answers the count as it now stands.
   */
  const changeCount = async (key: string, next: (count: number) => number | undefined): Promise<number> => {
    for (let attempt = 0; ; attempt++) {
      const entry = await kv.get(key);
      const live = entry && entry.operation === 'PUT';
      const count = live ? Number(entry.string()) || 0 : 0;
      const to = next(count);
      if (to === undefined) return count;
      try {
        if (live) await kv.update(key, String(to), entry.revision);
        else await kv.create(key, String(to));
        return to;
      } catch (err) {
        if (!lostRace(err) || attempt > 200) throw err;
        await pause(attempt);
      }
    }
  };

  // hitNow (docs/distributed.md#the-other-nats-adapters): decided from this process's view of the window, the shared
  // total it last read plus what it has counted since; what it counted is added to the shared total in the
  // background, at most every `shareEveryMs`, so a read never waits on NATS
  const shareEveryMs = options.shareEveryMs ?? 100;
  interface Local {
    window: number;
    /** the shared total as this process last read it, its own shared counts included */
    known: number;
    /** counted here, being added to the shared total right now */
    sharing: number;
    /** counted here since */
    pending: number;
    timer?: NodeJS.Timeout;
  }
  const locals = new Map<string, Local>();
  let localWindow = 0;
  const share = async (key: string, local: Local) => {
    local.timer = undefined;
    local.sharing = local.pending;
    local.pending = 0;
    try {
      local.known = await changeCount(key, (count) => count + local.sharing);
    } catch {
      // the store is away: this process keeps counting on its own, and shares what it counted when it is back
      local.pending += local.sharing;
    }
    local.sharing = 0;
    if (local.pending > 0 && locals.get(key) === local) schedule(key, local);
  };
  const schedule = (key: string, local: Local) => {
    if (local.timer || local.sharing > 0) return;
    local.timer = setTimeout(() => void share(key, local), shareEveryMs);
    local.timer.unref();
  };

  const settle = async (key: string, resetSeconds: number, waiters: Waiter[]) => {
    let decisions: RateDecision[] = [];
    await changeCount(key, (read) => {
      let count = read;
      decisions = waiters.map((w) => {
        if (count >= w.limit) return { allowed: false, limit: w.limit, remaining: 0, resetSeconds };
        count++;
        return { allowed: true, limit: w.limit, remaining: w.limit - count, resetSeconds };
      });
      return count > read ? count : undefined;
    });
    for (const [i, w] of waiters.entries()) w.resolve(decisions[i]!);
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
    hitNow(bucket, limit) {
      const t = now();
      const window = Math.floor(t / 60_000);
      const resetSeconds = Math.max(1, Math.ceil(((window + 1) * 60_000 - t) / 1000));
      if (window !== localWindow) {
        // a past window's counts no longer limit anything
        for (const [k, l] of locals)
          if (l.window < window) {
            clearTimeout(l.timer);
            locals.delete(k);
          }
        localWindow = window;
      }
      const key = keyOf(bucket, window);
      let local = locals.get(key);
      if (!local) {
        local = { window, known: 0, sharing: 0, pending: 0 };
        locals.set(key, local);
      }
      const count = local.known + local.sharing + local.pending;
      if (count >= limit) return { allowed: false, limit, remaining: 0, resetSeconds };
      local.pending++;
      schedule(key, local);
      return { allowed: true, limit, remaining: limit - count - 1, resetSeconds };
    },
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
      for (const l of locals.values()) clearTimeout(l.timer);
      locals.clear();
      if (options.ownsConnection && !options.nc.isClosed()) await options.nc.drain();
    },
  };
};
