import { z } from 'zod';
import { TargetingResolved } from './events.js';
import { Lane } from './lanes.js';
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
  /** the lane it was submitted in (absent in messages before lanes: live) */
  lane: Lane.optional(),
  /**
   * its key had no other job of the lane out with the crawlers when it was dispatched: it goes to the lane's express
   * consumer, whose slots only such jobs take, so one key's backlog never holds a crawler slot another key waits for
   * (docs/fleet.md#lanes-and-fair-share)
   */
  first: z.boolean().optional(),
  /** its key's share against other keys of the lane, for the crawler's page scheduling (absent: 1) */
  weight: z.number().positive().optional(),
  /**
   * for a located search, the routes its place's record advises (docs/locations.md#how-routes-are-chosen): those to
   * avoid, that placed its place's searches elsewhere, and the one to try now and then so its record can recover
   */
  routes: z.object({ avoid: z.array(z.string()).optional(), prefer: z.string().optional() }).optional(),
  /** its location as resolved at submit: the crawl does not resolve it again (absent: it does) */
  targeting: TargetingResolved.optional(),
});
export type JobMessage = z.infer<typeof JobMessage>;
