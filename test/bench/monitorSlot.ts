/**
 * One daily slot of a monitor of 10,000 keywords (docs/rank-tracking.md), through the real scheduler over an embedded
 * store, with a simulated clock: two schedulers by default (two dispatchers) tick every `tickS` simulated seconds
 * through the slot's spread (SERP_MONITOR_SPREAD_MAX_S, an hour by default). It prints how many searches were
 * submitted, how many job ids were submitted twice, the most submitted in any clock minute against the key's rate, when
 * the first and the last went, and the wall time the slot took to enqueue:
 *   npx tsx test/bench/monitorSlot.ts [keywords=10000] [ratePerMin=300] [tickS=5] [schedulers=2]
 * It asserts no time; it exits 1 when a job is duplicated or a minute is over the rate (a correctness failure).
 */
import { createMemoryRateLimiter } from '../../services/adapters/rateLimiter/memory.js';
import { composeApplication } from '../../services/compose/application.js';
import { openCore } from '../../services/compose/embedded/core.js';
import { loadConfig } from '../../services/config/config.js';
import { createMonitorService } from '../../services/monitors/commands/monitors.js';
import { createMonitorVersions } from '../../services/monitors/commands/monitorVersions.js';
import { createRankRecorder } from '../../services/monitors/workers/recorder.js';
import { createMonitorScheduler } from '../../services/monitors/workers/scheduler.js';
import { createSearchService } from '../../services/searches/commands/searches.js';
import { removeDir, tempDataDir } from '../support/service.js';

const [keywordCount = 10_000, ratePerMin = 300, tickS = 5, schedulerCount = 2] = process.argv.slice(2).map(Number);
const SPREAD_MS = 3_600_000;
const data = tempDataDir('serp-bench-slot');
const config = loadConfig({}, { dataDir: data });
const core = await openCore(config);
const slotStart = Date.parse('2026-03-02T00:00:00.000Z');
let now = new Date(slotStart + 1000);
const clock = () => now;
const limiter = createMemoryRateLimiter(() => now.getTime());
const projected = (p: number) => core.projector.waitFor(p);
const created = await composeApplication(core, config).keys.create({ tier: 'enterprise', rateLimitPerMin: ratePerMin });
if (created.position) await projected(created.position);
const key = core.queries.keys.byId(created.keyId)!;
const monitors = createMonitorService({
  queries: core.queries,
  handle: core.handle,
  projected,
  tiers: config.tiers,
  versions: createMonitorVersions(core.eventStore),
  spreadMaxMs: config.monitorSpreadMaxS * 1000,
  now: clock,
});
const keywords = Array.from({ length: keywordCount }, (_, i) => `slot keyword ${i}`);
await monitors.create(key, {
  name: 'slot',
  keywords,
  domains: ['example.com', 'rival.com'],
  schedule: 'daily',
  depth: 100,
  backfill: false,
  device: 'desktop',
} as never);
// created a second into the slot: its first run is that slot, spread over the hour
const scheduler = () =>
  createMonitorScheduler({
    queries: core.queries,
    handle: core.handle,
    versions: createMonitorVersions(core.eventStore),
    searches: createSearchService({
      eventStore: core.eventStore,
      queries: core.queries,
      handle: core.handle,
      config: { ...config, cacheTtlS: 0 },
      now: clock,
    }),
    limiter,
    recorder: createRankRecorder({ ...core, projected, now: clock }),
    projected,
    spreadMaxMs: SPREAD_MS,
    now: clock,
  });
const schedulers = Array.from({ length: schedulerCount }, scheduler);
const settle = async () => core.projector.waitFor(await core.eventStore.headPosition());

/** SearchSubmitted events since `from`: job id and the simulated minute they went in */
let readFrom = 0;
const seen = new Map<string, number>();
const perMinute = new Map<number, number>();
let duplicates = 0;
const collect = async (minute: number) => {
  for (;;) {
    const batch = await core.eventStore.readAll({ fromPosition: readFrom, maxCount: 10_000 });
    if (batch.length === 0) return;
    readFrom = batch[batch.length - 1].globalPosition;
    for (const e of batch) {
      if (e.type !== 'SearchSubmitted') continue;
      const jobId = (e.data as { jobId: string }).jobId;
      if (seen.has(jobId)) duplicates++;
      else seen.set(jobId, minute);
      perMinute.set(minute, (perMinute.get(minute) ?? 0) + 1);
    }
  }
};

const wall0 = performance.now();
const end = slotStart + SPREAD_MS + 10 * 60_000;
let lastMinute = -1;
for (let t = slotStart + 1000; t <= end; t += tickS * 1000) {
  const minute = Math.floor((t - slotStart) / 60_000);
  if (minute !== lastMinute) {
    // what went in so far belongs to the minute that just ended
    if (lastMinute >= 0) await collect(lastMinute);
    lastMinute = minute;
  }
  now = new Date(t);
  await Promise.all(schedulers.map((x) => x.tick()));
  await settle();
}
await collect(lastMinute);
const wallS = (performance.now() - wall0) / 1000;
const minutes = [...seen.values()];
const counts = [...perMinute.values()];
const maxPerMinute = Math.max(...counts);
const runs = core.queries.monitors.openRuns().length;
console.log(
  `${keywordCount} keywords, key rate ${ratePerMin}/min, ${schedulerCount} scheduler(s) ticking every ${tickS} s (simulated)`,
);
console.log(
  `submitted: ${seen.size} distinct jobs of ${keywordCount} keywords, ${duplicates} submitted twice; ${runs} open run`,
);
console.log(
  `spread: the first in minute ${Math.min(...minutes)}, the last in minute ${Math.max(...minutes)} of the slot`,
);
console.log(
  `most in one clock minute: ${maxPerMinute} (the key's rate: ${ratePerMin}): ${maxPerMinute <= ratePerMin ? 'never over' : 'OVER THE RATE'}`,
);
console.log(`wall time: ${wallS.toFixed(1)} s to enqueue the slot (${(seen.size / wallS).toFixed(0)} jobs/s)`);
if (duplicates > 0 || maxPerMinute > ratePerMin || seen.size !== keywordCount) process.exitCode = 1;
await core.close();
removeDir(data);
