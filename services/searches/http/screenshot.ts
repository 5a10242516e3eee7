import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorBody } from '../../../contracts/errors.js';
import { ScreenshotQuery } from '../../../contracts/screenshots.js';
import { ApiError } from '../../api/errors.js';
import { isGone, sourceOf } from '../../api/jobs.js';
import { EXAMPLE_JOB_ID, screenshotErrors } from '../../api/routes/v1/errorExamples.js';
import type { V1Options } from '../../api/routes/v1/options.js';
import { sendScreenshot } from '../../api/screenshots.js';

const image = (description: string) => ({
  description,
  content: {
    'image/png': { schema: z.string().meta({ format: 'binary' }) },
    'image/webp': { schema: z.string().meta({ format: 'binary' }) },
  },
});

/**
 * `GET /v1/search/{id}/screenshot`: the first page of a finished search as Google served it, rendered offline from the
 * stored page (docs/screenshots.md). Counts as a read.
 */
export const screenshotRoutes: FastifyPluginAsync<V1Options> = async (app, opts) => {
  app.withTypeProvider<ZodTypeProvider>().get('/search/:job_id/screenshot', {
    config: { limit: 'read' },
    schema: {
      operationId: 'getSearchScreenshot',
      tags: ['native'],
      summary: "A finished search's first page as an image (PNG or WebP), rendered offline from the stored page",
      description:
        "The page Google served, laid out in Chromium with the search's device (viewport, user agent, scale), scripts off and no network. `?viewport=1` gives the first screen only. The image is kept: the same request again is read back, not rendered. `X-Serp-Render` says which (`rendered` or `kept`).",
      params: z.object({ job_id: z.string().meta({ examples: [EXAMPLE_JOB_ID] }) }),
      querystring: ScreenshotQuery,
      response: {
        200: image('the image: PNG, or WebP when format=webp or Accept asks for image/webp'),
        ...screenshotErrors,
        410: ErrorBody.describe('the search expired, or the page it was read from is no longer kept'),
        429: ErrorBody,
        503: ErrorBody.describe('the renderer is busy or has no Chromium, or the render ran past its deadline: retry'),
      },
    },
    handler: async (req, reply) => {
      const id = req.params.job_id;
      const notFound = () => new ApiError(404, 'SERP_JOB_NOT_FOUND', 'job not found');
      if (!/^[0-9a-f]{24}$/.test(id)) throw notFound();
      const job = await opts.searches.jobDoc(id);
      if (!job || job.keyId !== req.apiKey!.keyId) throw notFound();
      if (isGone(job, await sourceOf(opts.searches, job), opts.retentionDays))
        throw new ApiError(410, 'SERP_JOB_EXPIRED', 'job expired');
      return sendScreenshot(opts.pages, req, reply, job, opts.render.resultOf, req.query);
    },
  });
};
