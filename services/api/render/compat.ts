import type { SerpResult } from '../../../contracts/result.js';
import { toCompat } from '../../../parser/index.js';
import type { JobStatusDoc } from '../../../projections/jobStatus/jobStatus.js';

/** `output=compat`: the native result under SerpApi's names and envelope (the parser's mapping). */
export const compatResult = (native: SerpResult): Record<string, unknown> => toCompat(native);

/** A failed job in SerpApi's shape: `search_metadata.status: "Error"` and a top-level `error`. */
export const compatFailure = (job: JobStatusDoc, detail: string) => ({
  search_metadata: { id: job.jobId, status: 'Error', created_at: job.submittedAt },
  error: detail,
});
