import t from 'tap';
import { plannedPages, spreadWindowMs } from '../../services/fairShare/demand.js';

const HOUR = 3_600_000;

t.test('capacity against demand › how long a run is spread', async (t) => {
  t.equal(spreadWindowMs(24 * HOUR, HOUR, 1000, 1000), HOUR, 'a fleet that keeps up: the usual hour');
  t.equal(spreadWindowMs(10 * 60_000, HOUR, 1000, 1000), 10 * 60_000, 'never past its slot');
  t.equal(
    spreadWindowMs(24 * HOUR, HOUR, 200_000, 80),
    24 * HOUR,
    '200,000 pages at 80 a minute need 41 h: spread over the whole day, not bunched in its first hour',
  );
  t.equal(spreadWindowMs(24 * HOUR, HOUR, 9_600, 80), 2 * HOUR, '9,600 pages at 80 a minute: two hours');
  t.equal(spreadWindowMs(24 * HOUR, HOUR, 9_600, null), HOUR, 'capacity not known: as always');
});

t.test('capacity against demand › the monitors planned pages per hour', async (t) => {
  const from = new Date('2026-11-28T00:00:00Z');
  const daily = { cron: '0 6 * * *', timezone: 'UTC' };
  const loads = [{ monitorId: 'm', schedule: daily, pagesPerRun: 1200, nextSlot: '2026-11-28T06:00:00.000Z' }];
  const spread = plannedPages(loads, from, 24, HOUR, null);
  t.same([...spread], [['2026-11-28T06', 1200]], 'a daily run at 06:00, spread over its hour');
  const stretched = plannedPages(loads, from, 24, HOUR, 10);
  t.same(
    [...stretched],
    [
      ['2026-11-28T06', 600],
      ['2026-11-28T07', 600],
    ],
    'at 10 pages a minute it takes two hours',
  );
});
