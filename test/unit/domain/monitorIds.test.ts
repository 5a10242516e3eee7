import t from 'tap';
import {
  alertIdOf,
  backfillRunId,
  manualRunId,
  monitorJobId,
  runTimeOf,
  scheduledRunId,
} from '../../../domain/monitor/ids.js';

/**
 * Monitor ids are derived from what they name (docs/rank-tracking.md): two dispatchers deciding the same slot decide
 * the same run, and ids sort by time as the service's job ids do.
 */
t.test('monitor ids › a slot has one run, whoever schedules it', async (t) => {
  const slot = '2026-12-07T06:00:00.000Z';
  const id = scheduledRunId('mon_1', slot);
  t.match(id, /^run_[0-9a-f]{24}$/, 'run_ and 24 hex');
  t.equal(scheduledRunId('mon_1', slot), id, 'the same monitor and slot: the same run');
  t.not(scheduledRunId('mon_2', slot), id, 'another monitor: another run');
  t.not(scheduledRunId('mon_1', '2026-12-08T06:00:00.000Z'), id, 'another slot: another run');
  t.equal(runTimeOf(id), Date.parse(slot), 'the id says when its slot was');
  t.ok(
    scheduledRunId('mon_9', '2026-12-07T06:00:00.000Z') < scheduledRunId('mon_1', '2026-12-07T07:00:00.000Z'),
    'runs sort by time, whatever their monitor',
  );
});

t.test('monitor ids › backfills, manual runs, jobs and alerts', async (t) => {
  const created = '2026-12-07T09:30:00.000Z';
  t.equal(backfillRunId('mon_1', created), backfillRunId('mon_1', created), 'a monitor has one backfill');
  t.not(backfillRunId('mon_1', created), scheduledRunId('mon_1', created), 'never the id of a scheduled run');
  const manual = manualRunId(Date.parse(created), 'abcdef0123456789ffff');
  t.equal(
    manual,
    `run_${Date.parse(created).toString(16).padStart(12, '0')}abcdef012345`,
    'time, then the random part',
  );
  t.equal(runTimeOf(manual), Date.parse(created), 'and its time reads back');
  t.equal(runTimeOf('run_'), 0, 'an id without its time has time 0, never NaN');

  const job = monitorJobId(manual, 'coffee', Date.parse('2026-12-07T09:31:00.000Z'));
  t.match(job, /^[0-9a-f]{24}$/, 'a job id of the service’s shape');
  t.equal(
    monitorJobId(manual, 'coffee', Date.parse('2026-12-07T09:31:00.000Z')),
    job,
    'the same keyword: the same job',
  );
  t.not(monitorJobId(manual, 'tea', Date.parse('2026-12-07T09:31:00.000Z')), job, 'another keyword: another job');

  const alert = alertIdOf(manual, 'position_drop', 'example.com', 'coffee');
  t.match(alert, /^alr_[0-9a-f]{24}$/, 'alr_ and 24 hex');
  t.equal(alertIdOf(manual, 'position_drop', 'example.com', 'coffee'), alert, 'the same alert twice: one id');
  t.not(alertIdOf(manual, 'position_drop', 'example.com', 'tea'), alert, 'another keyword: another alert');
});
