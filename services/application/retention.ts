import { streams } from '../../contracts/events.js';
import { searchJobDecider } from '../../domain/searchJob/searchJob.js';
import type { JobStatusDoc } from '../../projections/jobStatus/jobStatus.js';
import { terminalStatuses } from '../../projections/jobStatus/jobStatus.js';
import type { BlobStore } from '../ports/blobStore.js';
import type { CommandHandler } from '../ports/commandHandler.js';
import type { EventStore } from '../ports/eventStore.js';
import { renderPrefix } from '../render/pageViews.js';
import { readJobState } from './jobState.js';

export interface SweepReport {
  /** jobs submitted before this instant were candidates */
  cutoff: string;
  purged: number;
  blobsDeleted: number;
  /** global position of the last SearchPurged appended: the read models have dropped the rows once there */
  position?: number;
}

/** the smallest job id of `at`'s millisecond (job ids are time-ordered: services/searches/commands/searches.ts) */
const firstJobIdAt = (at: number) => at.toString(16).padStart(12, '0').slice(-12) + '0'.repeat(12);

/**
 * Retention that deletes (docs/operations.md#retention): every ended job submitted more than `retentionDays` ago loses
 * its raw HTML, results and renders (blob store) and then its read-model rows (`SearchPurged`, which the projections turn into
 * deletions). The events stay: the audit record that the job ran, what it asked and what it was charged (`audit usage`
 * and replay keep working; a replay finds the result blobs gone and makes no result rows). Blobs go first: a crash
 * between the two leaves a job whose blobs are gone and the next sweep appends its SearchPurged; the other order could
 * leave blobs that no sweep would ever find again. Younger jobs and unfinished ones are never touched.
 */
export const sweepRetention = async (deps: {
  eventStore: EventStore;
  blobStore: BlobStore;
  handle: CommandHandler;
  /** read-model jobs with `after` < id < `before`, by id (queries.jobs.between) */
  jobsBetween(after: string, before: string, limit: number): JobStatusDoc[];
  retentionDays: number;
  /** an explicit cut instead of now − retentionDays (`serp-api retention sweep --before`) */
  before?: Date;
  now?: () => Date;
  onJob?: (jobId: string, blobs: number) => void;
}): Promise<SweepReport> => {
  const at = (deps.now?.() ?? new Date()).getTime();
  const cutoffMs = deps.before?.getTime() ?? at - deps.retentionDays * 86_400_000;
  const report: SweepReport = { cutoff: new Date(cutoffMs).toISOString(), purged: 0, blobsDeleted: 0 };
  const before = firstJobIdAt(cutoffMs + 1);
  let after = '';
  for (;;) {
    const page = deps.jobsBetween(after, before, 200);
    if (page.length === 0) break;
    after = page[page.length - 1].jobId;
    for (const job of page) {
      if (!terminalStatuses.has(job.status) || Date.parse(job.submittedAt) >= cutoffMs) continue;
      const state = await readJobState(deps.eventStore, job.jobId);
      if (state.purgedAt) continue;
      for (const key of state.blobs) await deps.blobStore.delete(key);
      // its screenshots and pixel positions, kept beside it and made from its page (docs/screenshots.md)
      const renders = await deps.blobStore.deleteUnder(renderPrefix(job.jobId));
      const res = await deps.handle(streams.searchJob(job.jobId), searchJobDecider, {
        type: 'PurgeSearch',
        jobId: job.jobId,
        now: new Date(at).toISOString(),
      });
      if (res.events.length === 0) continue;
      report.purged += 1;
      report.blobsDeleted += state.blobs.length + renders;
      if (res.position !== undefined) report.position = res.position;
      deps.onJob?.(job.jobId, state.blobs.length);
    }
  }
  return report;
};
