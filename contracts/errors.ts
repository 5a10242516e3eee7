import { z } from 'zod';

/** Every non-2xx body: `detail` is one line a human can act on; `code` is stable (`SERP_<AREA>_<WHAT>`). */
export const ErrorBody = z.object({
  detail: z.string(),
  code: z.string(),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;
