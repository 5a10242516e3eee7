import type { JobStatusDoc } from '../../projections/jobStatus/jobStatus.js';
import { terminalStatuses } from '../../projections/jobStatus/jobStatus.js';
import type { SearchService } from '../searches/commands/searches.js';

/** Waits (bounded) for a job to end: a synchronous search (`async: false` on /v1, every compat /search). */
export const waitForEnd = async (searches: SearchService, jobId: string, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await searches.jobDoc(jobId);
    if (!job || terminalStatuses.has(job.status) || Date.now() >= deadline) return job;
    await new Promise((r) => setTimeout(r, Math.min(50, Math.max(1, deadline - Date.now()))));
  }
};

/** Past SERP_RETENTION_DAYS (or once retention purged it, whatever the setting now) a job answers 410 everywhere. */
export const isExpired = (job: JobStatusDoc, retentionDays: number, now = Date.now()) =>
  job.purgedAt !== undefined || now - Date.parse(job.submittedAt) > retentionDays * 86_400_000;

/** The job whose result `job` answers with: itself, or for an answer from cache its source job. */
export const sourceOf = async (searches: SearchService, job: JobStatusDoc) =>
  job.sourceJobId ? await searches.jobDoc(job.sourceJobId) : job;

/**
 * Expired, or answered from cache by a job retention has purged since (its result is gone with it): what every
 * fetch checks before answering. `source` is `sourceOf(job)`.
 */
export const isGone = (job: JobStatusDoc, source: JobStatusDoc | undefined, retentionDays: number) =>
  isExpired(job, retentionDays) || (job.sourceJobId !== undefined && source?.purgedAt !== undefined);
