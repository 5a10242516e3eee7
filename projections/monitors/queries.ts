import { apiKeysQueries } from '../apiKeys/queries.js';
import type { DocReader } from '../projection.js';
import { type AlertDoc, monitorAlertsProjection } from './alerts.js';
import {
  type MonitorDoc,
  type MonitorRunDoc,
  type MonitorScheduleDoc,
  monitorRunsProjection,
  monitorScheduleProjection,
  monitorsProjection,
} from './monitors.js';

export const monitorQueries = (docs: DocReader) => ({
  byId: (monitorId: string) => docs.get<MonitorDoc>(monitorsProjection.name, monitorId),
  /** the key's monitors, by id */
  ofKey: (keyId: string) => docs.listByLookup<MonitorDoc>(monitorsProjection.name, keyId),
  countOfKey: (keyId: string) => docs.listByLookup<MonitorDoc>(monitorsProjection.name, keyId).length,
  /** every monitor that is not paused, with its next slot: what the scheduler looks at */
  scheduled: () => docs.listByLookup<MonitorScheduleDoc>(monitorScheduleProjection.name, 'active'),
  scheduleOf: (monitorId: string) => docs.get<MonitorScheduleDoc>(monitorScheduleProjection.name, monitorId),
  /** monitors not paused whose key is not revoked, and those whose next slot has come (the metrics' due runs) */
  dueCount(now: Date) {
    const live = docs.listByLookup<MonitorScheduleDoc>(monitorScheduleProjection.name, 'active');
    const at = now.toISOString();
    const keys = apiKeysQueries(docs);
    const running = live.filter((s) => keys.byId(s.keyId)?.status === 'active');
    return {
      monitors: running.length,
      due: running.filter((s) => s.nextSlot !== undefined && s.nextSlot <= at).length,
    };
  },
  openRuns: () => docs.listByLookup<MonitorRunDoc>(monitorRunsProjection.name, 'open'),
  run: (runId: string) => docs.get<MonitorRunDoc>(monitorRunsProjection.name, runId),
  /** the monitor's last `limit` completed runs, oldest first (run ids are time-ordered) */
  completedRuns: (monitorId: string, limit: number) =>
    docs.listByLookup<MonitorRunDoc>(monitorRunsProjection.name, `monitor:${monitorId}`, { last: limit }),
  /** a monitor's alerts with `from` ≤ at ≤ `to` (ISO instants; absent: unbounded), oldest first */
  alertsOf: (monitorId: string, from?: string, to?: string) =>
    docs.listBetween<AlertDoc>(
      monitorAlertsProjection.name,
      `${monitorId}|${from ?? ''}`,
      to ? `${monitorId}|${to}~` : `${monitorId}|~`,
      100_000,
    ),
});
export type MonitorQueries = ReturnType<typeof monitorQueries>;
