import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorBody } from '../../../contracts/errors.js';
import type { ReadModelQueries } from '../../../projections/index.js';
import type { BlobStore } from '../../ports/blobStore.js';
import { ApiError } from '../errors.js';
import { verifyRawLink } from '../signing.js';

export interface RawOptions {
  linkSecret: string;
  queries: ReadModelQueries;
  blobStore: BlobStore;
}

/** The presigned raw-HTML link: no key, only a valid unexpired signature. */
export const rawRoutes: FastifyPluginAsync<RawOptions> = async (app, ctx) => {
  app.withTypeProvider<ZodTypeProvider>().get('/raw/:job_id', {
    schema: {
      operationId: 'getRawHtml',
      tags: ['native'],
      summary: 'Raw HTML of a job (presigned link from output=html)',
      security: [],
      params: z.object({ job_id: z.string() }),
      querystring: z.object({ expires: z.coerce.number().int(), signature: z.string().max(128) }),
      response: {
        200: {
          description: 'the raw HTML, pages in order behind serp-page markers',
          content: { 'text/html': { schema: z.string() } },
        },
        403: ErrorBody,
        404: ErrorBody,
        410: ErrorBody,
        422: ErrorBody,
      },
    },
    handler: async (req, reply) => {
      const { job_id: jobId } = req.params;
      const check = verifyRawLink(ctx.linkSecret, jobId, req.query.expires, req.query.signature);
      if (check === 'expired')
        throw new ApiError(
          410,
          'SERP_LINK_EXPIRED',
          'this link has expired: fetch the job again with output=html for a new one',
        );
      if (check === 'invalid') throw new ApiError(403, 'SERP_LINK_INVALID', 'invalid link signature');
      const job = ctx.queries.jobs.byId(jobId);
      const doc = ctx.queries.results.byJobId(job?.sourceJobId ?? jobId);
      const body = doc ? await ctx.blobStore.get(doc.rawHtmlRef.key) : undefined;
      if (!body) throw new ApiError(404, 'SERP_RAW_NOT_FOUND', 'no raw HTML is kept for this job');
      // Google's page on the API's own origin: sandboxed (no script, no same-origin access) and never sniffed
      return reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', 'sandbox')
        .header('x-content-type-options', 'nosniff')
        .send(body.toString('utf8'));
    },
  });
};
