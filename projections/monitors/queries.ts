import type { DocReader } from '../projection.js';
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
  openRuns: () => docs.listByLookup<MonitorRunDoc>(monitorRunsProjection.name, 'open'),
  run: (runId: string) => docs.get<MonitorRunDoc>(monitorRunsProjection.name, runId),
  /** the monitor's last `limit` completed runs, oldest first (run ids are time-ordered) */
  completedRuns: (monitorId: string, limit: number) =>
    docs.listByLookup<MonitorRunDoc>(monitorRunsProjection.name, `monitor:${monitorId}`, { last: limit }),
});
export type MonitorQueries = ReturnType<typeof monitorQueries>;
