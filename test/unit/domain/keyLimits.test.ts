import t from 'tap';
import { deciderSpec } from '../../../domain/kernel/givenWhenThen.js';
import { type KeyLimitEvent, keyLimitsDecider } from '../../../domain/keyLimits/keyLimits.js';

const spec = deciderSpec(keyLimitsDecider);
const at = '2026-03-01T12:00:00.000Z';
const later = (ms: number) => new Date(Date.parse(at) + ms).toISOString();
const take = (id: string, over: Record<string, unknown> = {}) => ({
  type: 'Take' as const,
  keyId: 'k',
  kind: 'webhook' as const,
  id,
  limit: 2,
  current: 0,
  exists: () => true,
  refusal: (n: number) => `has ${n}`,
  now: at,
  ...over,
});
const taken = (id: string, extra: Record<string, unknown> = {}, when = at): KeyLimitEvent => ({
  type: 'KeyLimitTaken',
  data: { keyId: 'k', kind: 'webhook', id, ...extra, takenAt: when },
});

t.test('KeyLimits › counting', async (t) => {
  t.test('the first take records what the read model counted as the baseline', async (t) => {
    t.same(spec.given([]).when(take('a', { current: 1 })), [taken('a', { baseline: 1 })]);
    t.throws(() => spec.given([]).when(take('a', { current: 2 })), { code: 'SERP_WEBHOOK_LIMIT', message: 'has 2' });
  });
  t.test('then the stream counts, whatever the read model says', async (t) => {
    const given = [taken('a', { baseline: 1 })];
    t.throws(() => spec.given(given).when(take('b', { current: 0 })), { code: 'SERP_WEBHOOK_LIMIT' });
    t.same(spec.given(given).when(take('a')), [], 'a take already held decides nothing');
  });
  t.test('freeing an endpoint of the baseline gives its place back, once', async (t) => {
    const given = [taken('a', { baseline: 1 })];
    const free = { type: 'Free' as const, keyId: 'k', kind: 'webhook' as const, id: 'old', reason: 'deleted', now: at };
    const freed = spec.given(given).when(free);
    t.equal(freed.length, 1);
    t.same(spec.given([...given, ...freed]).when(take('b')), [taken('b')]);
    t.same(spec.given([...given, ...freed]).when(free), [], 'nothing left of the baseline to free');
  });
  t.test('a take whose creation never came is given back after a minute', async (t) => {
    const given = [taken('a', { baseline: 0 }), taken('b')];
    const gone = (id: string) => id !== 'b';
    t.throws(() => spec.given(given).when(take('c', { exists: gone, now: later(30_000) })), {
      code: 'SERP_WEBHOOK_LIMIT',
    });
    const events = spec.given(given).when(take('c', { exists: gone, now: later(61_000) }));
    t.same(
      events.map((e) => [e.type, e.data.id]),
      [
        ['KeyLimitFreed', 'b'],
        ['KeyLimitTaken', 'c'],
      ],
    );
  });
});

t.test('KeyLimits › one manual run per monitor, replays an hour', async (t) => {
  const start = (runId: string, completed: (id: string) => boolean) => ({
    type: 'StartManualRun' as const,
    keyId: 'k',
    monitorId: 'm',
    runId,
    completed,
    now: at,
  });
  const first = spec.given([]).when(start('r1', () => false));
  t.throws(() => spec.given(first).when(start('r2', () => false)), {
    code: 'SERP_MONITOR_RUN_IN_PROGRESS',
    message: /run r1 of this monitor is in progress/,
  });
  t.same(
    spec
      .given(first)
      .when(start('r2', (id) => id === 'r1'))
      .map((e) => e.type),
    ['KeyLimitFreed', 'KeyLimitTaken'],
    'once r1 completed, r2 starts',
  );
  const replay = (id: string, now: string) => ({
    type: 'RequestReplay' as const,
    keyId: 'k',
    replayId: id,
    perHour: 2,
    now,
  });
  const two = [...spec.given([]).when(replay('p1', at)), ...spec.given([]).when(replay('p2', later(1_000)))];
  t.throws(() => spec.given(two).when(replay('p3', later(2_000))), { code: 'SERP_WEBHOOK_REPLAY_LIMIT' });
  t.equal(spec.given(two).when(replay('p3', later(3_600_001))).length, 1, 'an hour after the first, one more');
});
