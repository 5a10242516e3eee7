import type { Lane } from '../../contracts/lanes.js';
import { depthOf, pagesFor } from '../../contracts/search.js';
import { laneOf } from '../../domain/searchJob/searchJob.js';
import { hourOf } from '../dashboard/hourlyOutcomes.js';
import { type JobStatusDoc, jobStatusProjection } from '../jobStatus/jobStatus.js';
import type { DocReader } from '../projection.js';
import { type LaneHourDoc, laneHoursProjection } from './laneHours.js';

/**
 * A job that has not ended, as the fair scheduler sees it (docs/fleet.md#lanes-and-fair-share): its lane, its key,
 * what it costs in pages and its key's share; `waiting` until a crawler starts it, then `crawling`.
 */
export interface QueuedJob {
  jobId: string;
  keyId: string;
  lane: Lane;
  /** Google pages its depth asks for at most (top 100: 10) */
  pages: number;
  /** its key's share in the lane */
  weight: number;
  /** where its submit sits in the log: the order a key's jobs are served in (0 for jobs from before it was kept) */
  position: number;
  submittedAt: string;
  state: 'waiting' | 'crawling';
}

const queued = (d: JobStatusDoc): QueuedJob => ({
  jobId: d.jobId,
  keyId: d.keyId,
  lane: d.lane ?? laneOf(d),
  pages: pagesFor(depthOf(d.request)),
  weight: d.weight ?? 1,
  position: d.position ?? 0,
  submittedAt: d.submittedAt,
  state: d.status === 'queued' ? 'waiting' : 'crawling',
});

export const queueQueries = (docs: DocReader) => ({
  /**
   * every charged job not yet ended, in submit order: the fair scheduler's state at a start (the dispatcher's, each
   * api's queue positions). Read once at start; what follows comes from the log.
   */
  open(): QueuedJob[] {
    return docs
      .listByLookup<JobStatusDoc>(jobStatusProjection.name, 'open')
      .filter((d) => d.charged)
      .map(queued)
      .sort((a, b) => a.position - b.position || a.submittedAt.localeCompare(b.submittedAt));
  },
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
});
