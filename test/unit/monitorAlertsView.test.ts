import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { streams } from '../../contracts/events.js';
import type { MonitorAlert } from '../../contracts/monitorAlerts.js';
import { alertDecider } from '../../domain/monitor/alerts.js';
import { monitorAlertsProjection } from '../../projections/monitors/alerts.js';
import { monitorQueries } from '../../projections/monitors/queries.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';
import { createCommandHandler } from '../../services/application/commandHandler.js';
import { createProjector } from '../../services/projector/projector.js';

/**
 * A monitor's alerts as `GET /v1/monitors/{id}/alerts` reads them (docs/rank-tracking.md#alerts): raised once per run,
 * listed oldest first, within a time range, and only the monitor's own.
 */
t.test('monitor alerts view', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-alerts-view-'));
  const eventStore = createSqliteEventStore({ path: join(dir, 'events.db') });
  const readModels = createSqliteReadModelStore(join(dir, 'read.db'));
  const projector = createProjector({ eventStore, readModels, projections: [monitorAlertsProjection] });
  await projector.start();
  t.teardown(async () => {
    await projector.stop();
    readModels.close();
    await eventStore.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const handle = createCommandHandler(eventStore);
  const raise = async (monitorId: string, runId: string, alerts: MonitorAlert[]) => {
    const r = await handle(streams.monitorAlerts(runId), alertDecider, {
      type: 'RaiseAlerts',
      runId,
      monitorId,
      keyId: 'k1',
      alerts,
      now: '2026-12-07T12:00:00.000Z',
    });
    if (r.position !== undefined) await projector.waitFor(r.position);
    return r.events.length;
  };
  const moved = (alertId: string, at: string): MonitorAlert => ({
    alertId,
    kind: 'moved',
    keyword: 'coffee',
    domain: 'mine.example',
    fromPosition: 9,
    toPosition: 3,
    at,
  });
  t.equal(await raise('mon_1', 'run_b', [moved('alr_2', '2026-12-07T10:00:00.000Z')]), 1, 'a run’s alert is raised');
  await raise('mon_1', 'run_a', [moved('alr_1', '2026-12-06T10:00:00.000Z')]);
  await raise('mon_2', 'run_c', [moved('alr_3', '2026-12-07T11:00:00.000Z')]);
  t.equal(
    await raise('mon_1', 'run_b', [moved('alr_9', '2026-12-07T10:00:00.000Z')]),
    0,
    'a run raises its alerts once',
  );

  const q = monitorQueries(readModels);
  t.same(
    q.alertsOf('mon_1').map((a) => [a.alertId, a.at]),
    [
      ['alr_1', '2026-12-06T10:00:00.000Z'],
      ['alr_2', '2026-12-07T10:00:00.000Z'],
    ],
    'the monitor’s own alerts, oldest first',
  );
  t.same(
    q.alertsOf('mon_1', '2026-12-07T00:00:00.000Z').map((a) => a.alertId),
    ['alr_2'],
    'from a time on',
  );
  t.same(
    q.alertsOf('mon_1', undefined, '2026-12-06T23:59:59.000Z').map((a) => a.alertId),
    ['alr_1'],
    'up to a time',
  );
  const [first] = q.alertsOf('mon_1');
  t.match(first, { runId: 'run_a', monitorId: 'mon_1', fromPosition: 9, toPosition: 3 }, 'with its run and what moved');
  t.notOk('keyId' in (first ?? {}), 'the key is not repeated in the alert');
});
