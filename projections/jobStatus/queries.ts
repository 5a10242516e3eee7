import type { DocReader } from '../projection.js';
import { type JobStatusDoc, jobStatusProjection } from './jobStatus.js';

export const jobStatusQueries = (docs: DocReader) => ({
  byId: (jobId: string) => docs.get<JobStatusDoc>(jobStatusProjection.name, jobId),
  /** jobs not yet terminal: what a restarted dispatcher enqueues again */
  open: () => docs.listByLookup<JobStatusDoc>(jobStatusProjection.name, 'open'),
});
