import { z } from 'zod';
import { SearchRequest } from './search.js';

/**
 * What the dispatcher puts on the queue for a crawler. `dispatch` counts deliberate re-enqueues, so the queue's
 * dedupe (message id = jobId + dispatch) never swallows one.
 */
export const JobMessage = z.object({
  jobId: z.string(),
  dispatch: z.number().int().nonnegative(),
  keyId: z.string(),
  cacheKey: z.string(),
  submittedAt: z.string(),
  request: SearchRequest,
});
export type JobMessage = z.infer<typeof JobMessage>;
