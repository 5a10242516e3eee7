import { LANES, type Lane } from '../../contracts/lanes.js';
import { hourOf } from '../dashboard/hourlyOutcomes.js';
import type { DocReader } from '../projection.js';
import { type LaneHourDoc, laneHoursProjection } from './laneHours.js';
import { type QueuedJobDoc, queueProjection } from './queue.js';

export const queueQueries = (docs: DocReader) => ({
  /** the lane's jobs not yet ended, waiting and crawling, in no particular order */
  ofLane: (lane: Lane) => docs.listByLookup<QueuedJobDoc>(queueProjection.name, lane),
  /** every job not yet ended, by lane */
  all: () =>
    Object.fromEntries(
      LANES.map((lane) => [lane, docs.listByLookup<QueuedJobDoc>(queueProjection.name, lane)]),
    ) as Record<Lane, QueuedJobDoc[]>,
  byId: (jobId: string) => docs.get<QueuedJobDoc>(queueProjection.name, jobId),
  /** the last `hours` UTC hours up to `now` of pages asked per lane, every hour present, oldest first */
  laneHours(hours: number, now: Date): LaneHourDoc[] {
    const before = hourOf(new Date(now.getTime() - hours * 3_600_000).toISOString());
    const byHour = new Map(
      docs.listBetween<LaneHourDoc>(laneHoursProjection.name, before, '~', hours + 1).map((d) => [d.hour, d]),
    );
    return Array.from({ length: hours }, (_, i) => {
      const hour = hourOf(new Date(now.getTime() - (hours - 1 - i) * 3_600_000).toISOString());
      return byHour.get(hour) ?? { hour, jobs: {}, pages: {} };
    });
  },
  /** jobs waiting and crawling per lane (the metrics' gauge, the dashboard's queue) */
  counts(): Record<Lane, { waiting: number; crawling: number }> {
    return Object.fromEntries(
      LANES.map((lane) => {
        const jobs = docs.listByLookup<QueuedJobDoc>(queueProjection.name, lane);
        const waiting = jobs.filter((j) => j.state === 'waiting').length;
        return [lane, { waiting, crawling: jobs.length - waiting }];
      }),
    ) as Record<Lane, { waiting: number; crawling: number }>;
  },
});
