// The read ceiling in a cluster (docs/api.md#limits): how long a read waits for its count, counted exactly on the
// request path (`hit`: a compare-and-set on NATS KV per batch of waiting reads) against counted here and shared in
// the background (`hitNow`, what reads use). Two limiters standing for two api processes (in this one process, each
// on its own connection) to a real three-node NATS cluster with the bucket replicated three times, as `serp-api
// cluster up` runs it; each sends reads open loop at a fixed rate, on schedule whether or not the ones before have
// been decided. Also prints how many reads each side let through past a ceiling both apis run into. Sides alternate
// round by round (compare.ts); figures only, no assertion.
// Run: npx tsx test/bench/readCeiling.ts [--rounds 4] [--rate 400] [--seconds 3]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect } from '@nats-io/transport-node';
import { createNatsKvRateLimiter } from '../../services/adapters/rateLimiter/natsKv.js';
import { startNatsServers } from '../../services/cli/dev/natsServer.js';
import type { RateLimiter } from '../../services/ports/rateLimiter.js';
import { alternate, machineNote, numberArg, printRatio, quantile } from './compare.js';

const rounds = numberArg('rounds', 4);
const rate = numberArg('rate', 400);
const seconds = numberArg('seconds', 3);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serp-read-ceiling-'));
const servers = await startNatsServers({ count: 3, dir });
const apis: RateLimiter[] = [];
for (let i = 0; i < 2; i++) {
  const nc = await connect({ servers: servers.urls.split(','), maxReconnectAttempts: -1 });
  apis.push(await createNatsKvRateLimiter({ nc, ownsConnection: true, bucket: 'serp_rate', replicas: 3 }));
}

let n = 0;
/**
 * Every api sends `rate` reads a second for `seconds` on one key, under a ceiling the two reach together halfway:
 * per read, the milliseconds from its turn to its decision; and how many were let through against the ceiling.
 */
const run = async (side: 'exact' | 'now') => {
  const bucket = `read:bench-${process.pid}-${n++}`;
  const perApi = rate * seconds;
  const limit = perApi; // the two apis together send twice the ceiling
  const times: number[] = [];
  let allowed = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    apis.map(async (limiter) => {
      const pending: Promise<void>[] = [];
      for (let i = 0; i < perApi; i++) {
        const due = started + (i * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const t0 = performance.now();
        if (side === 'now') {
          const d = limiter.hitNow(bucket, limit);
          times.push(performance.now() - t0);
          if (d.allowed) allowed++;
          // the decision is synchronous; a turn of the event loop lets the background share run as it would
          // between requests
          if (i % 8 === 0) await new Promise((r) => setImmediate(r));
        } else {
          pending.push(
            limiter.hit(bucket, limit).then(
              (d) => {
                times.push(performance.now() - t0);
                if (d.allowed) allowed++;
              },
              () => {
                failures++;
              },
            ),
          );
        }
      }
      await Promise.all(pending);
    }),
  );
  return { side, times, allowed, limit, failures, sent: perApi * apis.length };
};

try {
  const results = await alternate(rounds, { exact: () => run('exact'), now: () => run('now') }, (round, r) => {
    for (const x of [r.exact, r.now])
      console.log(
        `round ${round + 1} ${x.side.padEnd(5)}  p50 ${quantile(x.times, 0.5).toFixed(3)} ms  p99 ${quantile(x.times, 0.99).toFixed(3)} ms  let through ${x.allowed} of ${x.sent} at a ceiling of ${x.limit}${x.failures ? `  ${x.failures} failed` : ''}`,
      );
  });
  const all = (side: 'exact' | 'now') => results[side].flatMap((r) => r.times);
  const failures = (side: 'exact' | 'now') => results[side].reduce((s, r) => s + r.failures, 0);
  const over = (side: 'exact' | 'now') => results[side].map((r) => r.allowed - r.limit);
  console.log(
    `\nread ceiling, 2 apis × ${rate} reads/s × ${seconds} s a round, ${rounds} rounds, 3-node NATS (R3); ${machineNote()}`,
  );
  for (const side of ['exact', 'now'] as const)
    console.log(
      `${side === 'exact' ? 'exact (hit, on the request path)' : 'here first (hitNow, shared in the background)'}: a read waits p50 ${quantile(all(side), 0.5).toFixed(3)} ms, p99 ${quantile(all(side), 0.99).toFixed(3)} ms; let through past the ceiling per round: ${over(side).join(', ')}`,
    );
  printRatio(
    'a read waits for its count, p99, exact / here first',
    { value: quantile(all('exact'), 0.99), failures: failures('exact') },
    { value: quantile(all('now'), 0.99), failures: failures('now') },
    ['exact', 'here first'],
  );
} finally {
  for (const a of apis) await a.close();
  await servers.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
