import type { DocReader } from '../projection.js';
import { type JobStatusDoc, jobStatusProjection } from './jobStatus.js';

export const jobStatusQueries = (docs: DocReader) => ({
  byId: (jobId: string) => docs.get<JobStatusDoc>(jobStatusProjection.name, jobId),
  /** jobs not yet terminal: what a restarted dispatcher enqueues again */
  open: () => docs.listByLookup<JobStatusDoc>(jobStatusProjection.name, 'open'),
  /** the key's newest `limit` jobs, newest first: its open ones and its last ended ones (ids are time-ordered) */
  recentOfKey(keyId: string, limit: number): JobStatusDoc[] {
    const open = docs.listByLookup<JobStatusDoc>(jobStatusProjection.name, 'open').filter((j) => j.keyId === keyId);
    const ended = docs.listByLookup<JobStatusDoc>(jobStatusProjection.name, `key:${keyId}`, { last: limit });
    return [...open, ...ended].sort((a, b) => (a.jobId < b.jobId ? 1 : -1)).slice(0, limit);
  },
  /** every ended job of the key that retention has not purged (a monitor's backfill looks among them) */
  endedOfKey: (keyId: string) => docs.listByLookup<JobStatusDoc>(jobStatusProjection.name, `key:${keyId}`),
  /** jobs with `after` < id < `before` (ids are time-ordered: the retention sweep's pages of old jobs) */
  between: (after: string, before: string, limit: number) =>
    docs.listBetween<JobStatusDoc>(jobStatusProjection.name, after, before, limit),
});
