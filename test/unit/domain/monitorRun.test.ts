import t from 'tap';
import type { DomainRank } from '../../../contracts/events.js';
import { deciderSpec } from '../../../domain/kernel/givenWhenThen.js';
import {
  type MonitorRunCommand,
  type MonitorRunEvent,
  monitorRunDecider,
  plannedJobs,
  runRecord,
} from '../../../domain/monitor/monitorRun.js';

const spec = deciderSpec(monitorRunDecider);
const at = '2026-03-02T00:00:00.000Z';
const now = '2026-03-02T00:05:00.000Z';
const keywords = ['coffee', 'tea', 'milk'];
const monitor = {
  monitorId: 'mon_1',
  keyId: 'k1',
  domains: ['mine.example', 'rival.example'],
  search: { device: 'desktop' as const },
  depth: 20,
};
const run = runRecord(
  monitor,
  { version: 3, keywords },
  {
    runId: 'run_1',
    trigger: 'manual',
    noCache: true,
    startAt: at,
    intervalMs: 1_000,
    startedAt: at,
  },
);
const jobs = plannedJobs(run, keywords);
const started: MonitorRunEvent = { type: 'MonitorRunStarted', data: run };
const ranks: DomainRank[] = [
  { domain: 'mine.example', position: 3, url: 'https://mine.example/a', features: [] },
  { domain: 'rival.example', features: [] },
];
const check = (i: number, ok = true, over: Partial<Extract<MonitorRunCommand, { type: 'RecordCheck' }>> = {}) =>
  ({
    type: 'RecordCheck',
    runId: 'run_1',
    keyword: keywords[i]!,
    jobId: jobs[i]!.jobId,
    checkedAt: at,
    ok,
    ...(ok ? {} : { failure: 'captcha' }),
    ranks: ok ? ranks : [],
    now,
    ...over,
  }) as MonitorRunCommand;
const skipRest = (fromIndex: number, reason = 'quota_exhausted'): MonitorRunCommand => ({
  type: 'SkipRest',
  runId: 'run_1',
  fromIndex,
  reason,
  now,
});
/** the events of checking the first `n` keywords, in order */
const checked = (n: number) => {
  const out: MonitorRunEvent[] = [started];
  for (let i = 0; i < n; i++) out.push(...spec.given(out).when(check(i)));
  return out;
};

t.test('MonitorRun › started', async (t) => {
  t.test('once per id; its record references the monitor version and counts, never lists, the keywords', async (t) => {
    t.same(spec.given([]).when({ type: 'StartRun', run }), [started]);
    t.same(spec.given([started]).when({ type: 'StartRun', run }), [], 'a second dispatcher starts nothing');
    t.match(run, { monitorVersion: 3, keywordCount: 3, domains: monitor.domains, depth: 20 });
    t.notOk('keywords' in run, 'no keyword list in the event');
  });
  t.test('with nothing to search it completes at once', async (t) => {
    const empty = runRecord(monitor, { backfill: [], sources: [] }, { ...run, trigger: 'backfill' });
    t.same(
      spec
        .given([])
        .when({ type: 'StartRun', run: empty })
        .map((e) => e.type),
      ['MonitorRunStarted', 'MonitorRunCompleted'],
    );
  });
  t.test('a slot with no quota at all is started, skipped whole and completed', async (t) => {
    const events = spec.given([]).when({ type: 'StartRun', run, skipAll: 'quota_exhausted' });
    t.same(
      events.map((e) => e.type),
      ['MonitorRunStarted', 'MonitorKeywordsSkipped', 'MonitorRunCompleted'],
    );
    t.match(events[1]?.data, { count: 3, fromIndex: 0, reason: 'quota_exhausted' });
    t.match(events[2]?.data, { checked: 0, failed: 0, skipped: 3, skipReason: 'quota_exhausted' });
  });
});

t.test('MonitorRun › checks', async (t) => {
  t.test('each job is checked once, with its ranks', async (t) => {
    const [first] = spec.given([started]).when(check(0));
    t.match(first, {
      type: 'MonitorKeywordChecked',
      data: { runId: 'run_1', monitorId: 'mon_1', keyword: 'coffee', ok: true, ranks, recordedAt: now },
    });
    t.same(spec.given([started, first!]).when(check(0)), [], 'a redelivered result records nothing');
  });
  t.test('a failed search records its failure and every domain without a position', async (t) => {
    const [failed] = spec.given([started]).when(check(1, false));
    t.match(failed?.data, {
      ok: false,
      failure: 'captcha',
      ranks: [
        { domain: 'mine.example', features: [] },
        { domain: 'rival.example', features: [] },
      ],
    });
  });
  t.test('the last check completes the run, with its counts', async (t) => {
    const two = checked(2);
    const last = spec.given(two).when(check(2, false));
    t.same(
      last.map((e) => e.type),
      ['MonitorKeywordChecked', 'MonitorRunCompleted'],
    );
    t.match(last[1]?.data, { runId: 'run_1', keyId: 'k1', trigger: 'manual', checked: 2, failed: 1, skipped: 0 });
    t.same(spec.given([...two, ...last]).when(check(2)), [], 'a completed run decides nothing more');
  });
  t.test('a check of a run never started is refused', async (t) => {
    t.throws(() => spec.given([]).when(check(0)), { code: 'SERP_MONITOR_RUN_NOT_FOUND' });
  });
});

t.test('MonitorRun › skips', async (t) => {
  t.test('the rest of the plan is counted, not named, and completes the run', async (t) => {
    const one = checked(1);
    const skipped = spec.given(one).when(skipRest(1, 'monitor_paused'));
    t.same(
      skipped.map((e) => e.type),
      ['MonitorKeywordsSkipped', 'MonitorRunCompleted'],
    );
    t.match(skipped[0]?.data, { count: 2, fromIndex: 1, reason: 'monitor_paused' });
    t.notOk('keywords' in (skipped[0]?.data ?? {}), 'no keyword names');
    t.match(skipped[1]?.data, { checked: 1, skipped: 2, skipReason: 'monitor_paused' });
  });
  t.test('a check already recorded in the skipped range is not counted twice', async (t) => {
    const withLast = [started, ...spec.given([started]).when(check(2))];
    const [skip] = spec.given(withLast).when(skipRest(1));
    t.match(skip?.data, { count: 1, fromIndex: 1 });
  });
  t.test('a skip from where an earlier one began, or later, decides nothing; earlier counts up to it', async (t) => {
    const first = [started, ...spec.given([started]).when(skipRest(2))];
    t.same(spec.given(first).when(skipRest(2)), []);
    const before = spec.given(first).when(skipRest(0, 'key_revoked'));
    t.match(before[0]?.data, { count: 2, fromIndex: 0 });
    t.match(before[1]?.data, { skipped: 3, skipReason: 'quota_exhausted' }, 'the first reason is the run’s');
  });
  t.test('a check of a skipped job records nothing', async (t) => {
    const skipped = [started, ...spec.given([started]).when(skipRest(1))];
    t.same(spec.given(skipped).when(check(2)), []);
    t.equal(spec.given(skipped).when(check(0)).length, 2, 'one before the skip is checked, and completes the run');
  });
});
