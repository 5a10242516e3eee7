import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorBody } from '../../../../contracts/errors.js';
import { PixelPositionsMetadata, Rectangle } from '../../../../contracts/screenshots.js';
import type { JobStatusDoc } from '../../../../projections/jobStatus/jobStatus.js';
import { ApiError } from '../../errors.js';
import { positionedDoc, sendScreenshot } from '../../screenshots.js';
import type { AdminOptions } from './options.js';

const JobParams = z.object({ job_id: z.string().max(64) });

/**
 * A history point's page in the dashboard's monitor view (docs/screenshots.md): the page Google served that day, as
 * an image, and where each organic result lay on it, for the view to outline the tracked domain's. The operator sees
 * every key's searches, as the dashboard's other reads do.
 */
export const adminPageRoutes: FastifyPluginAsync<AdminOptions> = async (app, opts) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const admin = { tags: ['admin'], security: [{ adminToken: [] }] };
  const jobOf = (id: string): JobStatusDoc => {
    const job = opts.queries.jobs.byId(id);
    if (!job) throw new ApiError(404, 'SERP_JOB_NOT_FOUND', `no search with id ${id}`);
    return job;
  };
  const resultOf = (job: JobStatusDoc) => opts.queries.results.byJobId(job.sourceJobId ?? job.jobId);

  r.get('/jobs/:job_id/screenshot', {
    schema: {
      ...admin,
      operationId: 'getAdminJobScreenshot',
      summary: "A search's first page as Google served it, the whole page as a PNG (rendered offline, then kept)",
      params: JobParams,
      response: {
        200: { description: 'the page', content: { 'image/png': { schema: z.string().meta({ format: 'binary' }) } } },
        401: ErrorBody,
        404: ErrorBody,
        409: ErrorBody,
        410: ErrorBody,
        422: ErrorBody,
        503: ErrorBody,
      },
    },
    handler: async (req, reply) =>
      sendScreenshot(opts.pages, req, reply, jobOf(req.params.job_id), resultOf, { format: 'png', viewport: false }),
  });

  r.get('/jobs/:job_id/positions', {
    schema: {
      ...admin,
      operationId: 'getAdminJobPositions',
      summary: "Where each organic result of a search's first page lay on it (pixel positions)",
      params: JobParams,
      response: {
        200: z.object({
          job_id: z.string(),
          pixel_positions: PixelPositionsMetadata,
          organic_results: z.array(
            z.object({
              position: z.number().int(),
              link: z.string().nullable(),
              rectangle: Rectangle.nullable(),
              above_the_fold: z.boolean(),
            }),
          ),
        }),
        401: ErrorBody,
        404: ErrorBody,
        409: ErrorBody,
        410: ErrorBody,
        422: ErrorBody,
        503: ErrorBody,
      },
    },
    handler: async (req) => {
      const job = jobOf(req.params.job_id);
      const { doc, metadata } = await positionedDoc(opts.pages, job, resultOf);
      return {
        job_id: job.jobId,
        pixel_positions: metadata,
        organic_results: doc.result.organic_results.map((o) => {
          const placed = o as typeof o & { rectangle: z.infer<typeof Rectangle> | null; above_the_fold: boolean };
          return {
            position: o.position,
            link: o.link ?? null,
            rectangle: placed.rectangle,
            above_the_fold: placed.above_the_fold,
          };
        }),
      };
    },
  });
};
