import { streams } from '../../../contracts/events.js';
import { fold } from '../../../domain/kernel/decider.js';
import { type MonitorEvent, monitorDecider } from '../../../domain/monitor/monitor.js';
import type { MonitorAt, RunStartedData } from '../../../domain/monitor/monitorRun.js';
import type { EventStore } from '../../ports/eventStore.js';

/**
 * A monitor's keywords as of a version of its stream (docs/rank-tracking.md#events-and-read-models): a run records
 * the version, not the list, and whoever needs the list (the scheduler submitting a run's searches, the alerter, the
 * api answering a run's jobs) folds the monitor's stream up to it, with the monitor decider's own fold. A monitor's
 * stream holds its configuration only (a few events), and versions never change once recorded, so they are kept.
 */
export const createMonitorVersions = (eventStore: EventStore, max = 1_000) => {
  const kept = new Map<string, string[]>();
  const keep = (monitorId: string, version: number, keywords: string[]) => {
    if (kept.size >= max) kept.delete(kept.keys().next().value as string);
    kept.set(`${monitorId}@${version}`, keywords);
  };
  const read = async (monitorId: string, upTo?: number) => {
    const { events } = await eventStore.readStream(
      streams.monitor(monitorId),
      upTo === undefined ? {} : { maxCount: upTo + 1 },
    );
    const state = fold(monitorDecider, events as unknown as MonitorEvent[]);
    const last = events[events.length - 1];
    if (state.status === 'none' || !last) return undefined;
    keep(monitorId, last.streamVersion, state.keywords);
    return { version: last.streamVersion, keywords: state.keywords };
  };
  return {
    /** the monitor's keywords now, and the version they are of; undefined for a monitor that never was */
    current: (monitorId: string): Promise<MonitorAt | undefined> => read(monitorId),
    /** a run's keywords in plan order: its own (older runs, backfills), else its monitor's at its version */
    async ofRun(run: RunStartedData): Promise<string[]> {
      if (run.keywords) return run.keywords;
      if (run.monitorVersion === undefined) return [];
      const hit = kept.get(`${run.monitorId}@${run.monitorVersion}`);
      if (hit) return hit;
      return (await read(run.monitorId, run.monitorVersion))?.keywords ?? [];
    },
  };
};
export type MonitorVersions = ReturnType<typeof createMonitorVersions>;
