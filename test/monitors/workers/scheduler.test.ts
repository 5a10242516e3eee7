import t, { type Test } from 'tap';
import { createMemoryRateLimiter } from '../../../services/adapters/rateLimiter/memory.js';
import { composeApplication } from '../../../services/compose/application.js';
import { openCore } from '../../../services/compose/embedded/core.js';
import { loadConfig } from '../../../services/config/config.js';
import { createMonitorService } from '../../../services/monitors/commands/monitors.js';
import { createMonitorVersions } from '../../../services/monitors/commands/monitorVersions.js';
import { createRankRecorder } from '../../../services/monitors/workers/recorder.js';
import { createMonitorScheduler } from '../../../services/monitors/workers/scheduler.js';
import { createSearchService } from '../../../services/searches/commands/searches.js';
import { removeDir, tempDataDir } from '../../support/service.js';

/**
 * The monitor scheduler over an embedded store, with a clock of its own: two schedulers (two dispatchers) that see
 * the same slot start one run and submit one job per keyword, paced under the key's rate; a key out of quota gets a
 * skipped run with the reason; a revoked key's monitors stop; a new scheduler (a restart) carries on a run.
 */
const setup = async (t: Test, tier: string, quota?: number) => {
  const data = tempDataDir('serp-sched');
  const config = loadConfig({}, { dataDir: data });
  const core = await openCore(config);
  t.teardown(async () => {
    await core.close();
    removeDir(data);
  });
  let now = new Date('2026-03-02T10:20:00.000Z');
  const clock = () => now;
  const limiter = createMemoryRateLimiter(() => now.getTime());
  const projected = (p: number) => core.projector.waitFor(p);
  const { keys } = composeApplication(core, config);
  const created = await keys.create({ tier, ...(quota !== undefined ? { monthlyQuota: quota } : {}) });
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
  const scheduler = () => {
    const searches = createSearchService({
      eventStore: core.eventStore,
      queries: core.queries,
      handle: core.handle,
      config: { ...config, cacheTtlS: 0 },
      now: clock,
    });
    const recorder = createRankRecorder({ ...core, projected, now: clock });
    return createMonitorScheduler({
      queries: core.queries,
      handle: core.handle,
      searches,
      limiter,
      recorder,
      versions: createMonitorVersions(core.eventStore),
      projected,
      spreadMaxMs: 60_000,
      now: clock,
    });
  };
  const submitted = async () => {
    const all = await core.eventStore.readAll({ fromPosition: 0, maxCount: 1_000_000 });
    return all
      .filter((e) => e.type === 'SearchSubmitted')
      .map((e) => e.data as { jobId: string; request: { keyword: string } });
  };
  const settle = async () => core.projector.waitFor(await core.eventStore.headPosition());
  return { core, keys, key, monitors, scheduler, submitted, settle, set: (iso: string) => (now = new Date(iso)) };
};

t.test('two schedulers, one slot: one run, one job per keyword, never over the rate', async (t) => {
  const s = await setup(t, 'starter');
  const keywords = Array.from({ length: 120 }, (_, i) => `kw ${i}`);
  const m = await s.monitors.create(s.key, {
    name: 'm',
    keywords,
    domains: ['example.com'],
    schedule: 'hourly',
    depth: 100,
    backfill: false,
    device: 'desktop',
  } as never);
  const [a, b] = [s.scheduler(), s.scheduler()];
  // the hourly slot in progress (10:00) starts at once; spread over at most a minute here, 120 keywords at the
  // starter rate of 60 a minute take two
  const perMinute: number[] = [];
  for (let minute = 0; minute < 4; minute++) {
    for (let sec = 0; sec < 60; sec += 5) {
      s.set(new Date(Date.parse('2026-03-02T10:20:00.000Z') + minute * 60_000 + sec * 1000).toISOString());
      await Promise.all([a.tick(), b.tick()]);
      await s.settle();
    }
    perMinute.push((await s.submitted()).length);
  }
  const jobs = await s.submitted();
  t.equal(jobs.length, 120, 'every keyword submitted once');
  t.equal(new Set(jobs.map((j) => j.jobId)).size, 120, 'no duplicate job');
  t.same(new Set(jobs.map((j) => j.request.keyword)), new Set(keywords));
  const minutes = perMinute.map((n, i) => n - (perMinute[i - 1] ?? 0));
  t.ok(
    minutes.every((n) => n <= 60),
    `at most the key's 60 a minute: ${minutes}`,
  );
  const runs = s.core.queries.monitors.openRuns();
  t.equal(runs.length, 1, 'one run for the slot');
  t.match(runs[0].run, { trigger: 'schedule', slot: '2026-03-02T10:00:00.000Z', monitorId: m.monitorId });
  t.equal(s.core.queries.monitors.scheduleOf(m.monitorId)?.nextSlot, '2026-03-02T11:00:00.000Z', 'next: 11:00');

  // a restart (a new scheduler) at the next slot: the next run, and nothing of the first submitted again
  s.set('2026-03-02T11:00:01.000Z');
  const c = s.scheduler();
  for (let i = 0; i < 40; i++) {
    await c.tick();
    await s.settle();
    s.set(new Date(Date.parse('2026-03-02T11:00:01.000Z') + i * 5000).toISOString());
  }
  const after = await s.submitted();
  t.equal(after.length, 240, 'the second slot submits its own 120');
  t.equal(new Set(after.map((j) => j.jobId)).size, 240, 'still no duplicate');
});

t.test('no quota: the run is recorded skipped with the reason; a revoked key stops', async (t) => {
  const s = await setup(t, 'free', 1);
  const m = await s.monitors.create(s.key, {
    name: 'm',
    keywords: ['a', 'b', 'c'],
    domains: ['example.com'],
    schedule: 'daily',
    depth: 100,
    backfill: false,
    device: 'desktop',
  } as never);
  const sched = s.scheduler();
  for (let i = 0; i < 6; i++) {
    s.set(new Date(Date.parse('2026-03-02T10:20:00.000Z') + i * 7000).toISOString());
    await sched.tick();
    await s.settle();
  }
  t.equal((await s.submitted()).length, 1, 'the one search the quota allows');
  const open = s.core.queries.monitors.openRuns();
  t.equal(open.length, 1, 'the run waits for its one search');
  t.match(open[0], { status: 'open', skipped: 2, skipReason: 'quota_exhausted' }, 'the rest skipped, with the reason');

  s.set('2026-03-03T00:00:05.000Z');
  await sched.tick();
  await s.settle();
  const next = s.core.queries.monitors.completedRuns(m.monitorId, 10);
  t.equal(next.length, 1, 'the next slot is recorded');
  t.match(next[0], { status: 'completed', skipped: 3, checked: 0, skipReason: 'quota_exhausted' }, 'skipped whole');

  const revoked = await s.keys.revoke(s.key.keyId);
  if (revoked.position) await s.core.projector.waitFor(revoked.position);
  s.set('2026-03-04T00:00:05.000Z');
  await sched.tick();
  await s.settle();
  t.equal(s.core.queries.monitors.completedRuns(m.monitorId, 10).length, 1, 'a revoked key: no new run');
  t.equal(sched.due(), 0, 'and nothing counts as due');
});

t.test("a run's searches ask for the monitor's depth, so the crawl fetches no more pages than it needs", async (t) => {
  const s = await setup(t, 'starter');
  await s.monitors.create(s.key, {
    name: 'top 20',
    keywords: ['a', 'b'],
    domains: ['example.com'],
    schedule: 'hourly',
    depth: 20,
    backfill: false,
    device: 'desktop',
  } as never);
  const sched = s.scheduler();
  for (let sec = 0; sec < 120; sec += 5) {
    s.set(new Date(Date.parse('2026-03-02T10:20:00.000Z') + sec * 1000).toISOString());
    await sched.tick();
    await s.settle();
  }
  const jobs = (await s.submitted()) as Array<{ request: { keyword: string; depth?: number; no_cache?: boolean } }>;
  t.same(
    jobs.map((j) => [j.request.keyword, j.request.depth, j.request.no_cache]),
    [
      ['a', 20, true],
      ['b', 20, true],
    ],
    'each keyword once, at depth 20, fresh',
  );
});

t.test(
  "a run's events are the same size whatever its keywords: referenced by the monitor's version, skips counted",
  async (t) => {
    const s = await setup(t, 'pro');
    const long = (i: number) => `${'a very long keyword that says a lot about coffee '.repeat(10)}${i}`.slice(0, 480);
    const make = async (name: string, keyword: (i: number) => string) => {
      const m = await s.monitors.create(s.key, {
        name,
        keywords: Array.from({ length: 199 }, (_, i) => keyword(i)),
        domains: ['example.com'],
        schedule: 'daily',
        depth: 100,
        backfill: false,
        device: 'desktop',
      } as never);
      await s.monitors.change(s.key, m.monitorId, { paused: true } as never);
      return m.monitorId;
    };
    const short = await make('short', (i) => `k${i}`);
    const longer = await make('long', long);
    const sched = s.scheduler();
    /** bytes the log grew by over `runs` manual runs of a paused monitor, each skipped by the scheduler */
    const growth = async (monitorId: string, runs: number) => {
      const before = await s.core.eventStore.headPosition();
      for (let i = 0; i < runs; i++) {
        const run = await s.monitors.run(s.key, monitorId, true);
        t.equal(run.jobs.length, 199, "the run's jobs are the monitor's keywords");
        await sched.tick();
        await s.settle();
        t.equal(s.core.queries.monitors.run(run.run_id)?.status, 'completed', 'skipped whole: completed');
      }
      const events = await s.core.eventStore.readAll({ fromPosition: before, maxCount: 10_000 });
      return {
        bytes: events.reduce((n, e) => n + JSON.stringify(e.data).length, 0) / runs,
        skips: events.filter((e) => e.type === 'MonitorKeywordsSkipped').map((e) => e.data),
      };
    };
    const a = await growth(short, 3);
    const b = await growth(longer, 3);
    t.ok(
      b.bytes < a.bytes + 200,
      `per run: ${Math.round(a.bytes)} bytes (2-character keywords), ${Math.round(b.bytes)} (480)`,
    );
    t.ok(b.bytes < 4_000, `a run of 199 long keywords grows the log by ${Math.round(b.bytes)} bytes`);
    t.match(b.skips[0], { count: 199, fromIndex: 0, reason: 'monitor_paused' }, 'a skip is a count and a reason');
    t.notOk('keywords' in (b.skips[0] as object), 'not the keywords');
  },
);

t.test('one manual run of a monitor at a time: a second is refused, naming the first', async (t) => {
  const s = await setup(t, 'starter');
  const m = await s.monitors.create(s.key, {
    name: 'm',
    keywords: ['a', 'b'],
    domains: ['example.com'],
    schedule: 'daily',
    depth: 100,
    backfill: false,
    device: 'desktop',
  } as never);
  const first = await s.monitors.run(s.key, m.monitorId, true);
  await t.rejects(s.monitors.run(s.key, m.monitorId, true), {
    code: 'SERP_MONITOR_RUN_IN_PROGRESS',
    message: new RegExp(`run ${first.run_id} of this monitor is in progress`),
  });
  await t.rejects(
    s.monitors.run(s.key, m.monitorId, true),
    { message: new RegExp(`its checks appear in GET /v1/monitors/${m.monitorId}/history as its searches end`) },
    'and points at a route that exists (GET …/runs answers 405)',
  );
  // once it completed (skipped here: the monitor is paused), the next one starts
  await s.monitors.change(s.key, m.monitorId, { paused: true } as never);
  await s.scheduler().tick();
  await s.settle();
  const second = await s.monitors.run(s.key, m.monitorId, true);
  t.not(second.run_id, first.run_id, 'the next run starts once the first completed');
});
