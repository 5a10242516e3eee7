import t from 'tap';
import { nextSlot, pacing, scheduleProblem, slotAt } from '../../../domain/monitor/schedule.js';

/** When a monitor runs (docs/rank-tracking.md): its schedule's firings, what is refused, and how a run is paced. */
const at = (iso: string) => new Date(iso);

t.test('monitor schedule › what is refused, with a reason a user can act on', async (t) => {
  const now = at('2026-12-07T12:00:00Z');
  t.equal(scheduleProblem('hourly', now), undefined, 'the presets are always fine');
  t.equal(scheduleProblem({ cron: '0 6 * * 1-5', timezone: 'Europe/Berlin' }, now), undefined, 'a weekday cron');
  t.match(
    scheduleProblem({ cron: '0 6 * *', timezone: 'UTC' }, now),
    /must have five fields/,
    'four fields: says how many it needs',
  );
  t.match(
    scheduleProblem({ cron: '0 6 * * *', timezone: 'Mars/Olympus' }, now),
    /unknown timezone "Mars\/Olympus"/,
    'an unknown time zone is named',
  );
  t.match(scheduleProblem({ cron: '0 61 * * *', timezone: 'UTC' }, now), /does not parse/, 'hour 61');
  t.match(
    scheduleProblem({ cron: '*/30 * * * *', timezone: 'UTC' }, now),
    /fires more often than hourly .*at most once an hour/,
    'every half hour is too often',
  );
  t.match(
    scheduleProblem({ cron: '0,30 9 * * *', timezone: 'UTC' }, now),
    /more often than hourly/,
    'so are two firings half an hour apart once a day',
  );
});

t.test('monitor schedule › slots', async (t) => {
  t.same(slotAt('hourly', at('2026-12-07T10:59:59Z')), at('2026-12-07T10:00:00Z'), 'hourly: the hour in progress');
  t.same(slotAt('hourly', at('2026-12-07T11:00:00Z')), at('2026-12-07T11:00:00Z'), 'a firing is its own slot');
  t.same(slotAt('daily', at('2026-12-07T23:00:00Z')), at('2026-12-07T00:00:00Z'), 'daily: midnight UTC');
  t.same(
    slotAt('weekly', at('2026-12-06T12:00:00Z')),
    at('2026-11-30T00:00:00Z'),
    'weekly: the Monday before (7 December 2026 is a Monday; the 6th is a Sunday)',
  );
  t.same(nextSlot('weekly', at('2026-11-30T00:00:00Z')), at('2026-12-07T00:00:00Z'), 'and the next one a week on');
  const berlin = { cron: '0 6 * * *', timezone: 'Europe/Berlin' };
  t.same(slotAt(berlin, at('2026-12-07T12:00:00Z')), at('2026-12-07T05:00:00Z'), '06:00 in Berlin in winter is 05:00Z');
  t.same(nextSlot(berlin, at('2026-06-30T04:00:00Z')), at('2026-07-01T04:00:00Z'), 'and 04:00Z in summer');
});

t.test('monitor schedule › a run is spread over its window, never faster than the key’s rate', async (t) => {
  t.same(pacing(60, 3_600_000, 100), { intervalMs: 60_000 }, '60 keywords over an hour: one a minute');
  t.same(pacing(60, 3_600_000, 1), { intervalMs: 60_000 }, 'a key of 1 a minute: one a minute as well');
  t.same(pacing(600, 3_600_000, 5), { intervalMs: 12_000 }, '600 keywords at 5 a minute: the rate wins (12 s)');
  t.same(pacing(1, 3_600_000, 60), { intervalMs: 1_000 }, 'one keyword: nothing to spread, only the rate');
  t.same(pacing(3, 1_000, 0), { intervalMs: 60_000 }, 'a rate of 0 counts as 1 a minute, never a division by 0');
});
