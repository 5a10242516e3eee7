import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorBody } from '../../../contracts/errors.js';
import type { ReadModelQueries } from '../../../projections/index.js';
import { verifyRawLink } from '../../answers/signing.js';
import type { BlobStore } from '../../ports/blobStore.js';
import type { RateLimiter } from '../../ports/rateLimiter.js';
import type { AuthFailureGate } from '../auth.js';
import { ApiError } from '../errors.js';
import { checkReadCeiling } from '../limits.js';
import { sendRawHtml } from '../render/rawHtml.js';

export interface RawOptions {
  linkSecret: string;
  queries: ReadModelQueries;
  blobStore: BlobStore;
  limiter: RateLimiter;
  authFailures: AuthFailureGate;
  /** requests one address may send to signed links a minute (SERP_RAW_PER_ADDRESS_PER_MIN) */
  perAddressPerMin: number;
}

const gone = () => new ApiError(404, 'SERP_RAW_NOT_FOUND', 'no raw HTML is kept for this job');

/**
 * The presigned raw-HTML link: no key, only a valid unexpired signature. A link is the key's own read, handed to
 * someone else (docs/security.md): each answer counts against the owning key's read ceiling, as its polls do, and
 * against a per-address ceiling of its own, and a revoked key's links stop answering. A bad signature counts as a
 * credential failure of the address.
 */
export const rawRoutes: FastifyPluginAsync<RawOptions> = async (app, ctx) => {
  app.withTypeProvider<ZodTypeProvider>().get('/raw/:job_id', {
    schema: {
      operationId: 'getRawHtml',
      tags: ['native'],
      summary: 'Raw HTML of a job (presigned link from output=html)',
      description:
        'Sent gzip-encoded as stored when the client accepts gzip. Counts against the read ceiling of the key that ' +
        'made the job, and against a per-address ceiling of signed-link requests.',
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
        429: ErrorBody.describe("over the address's ceiling of signed-link requests, or the key's read ceiling"),
      },
    },
    handler: async (req, reply) => {
      ctx.authFailures.check(req);
      const byAddress = await ctx.limiter.hit(`raw:${req.ip}`, ctx.perAddressPerMin);
      if (!byAddress.allowed) {
        throw new ApiError(
          429,
          'SERP_RAW_RATE_LIMITED',
          `too many raw-HTML requests from this address: retry in ${byAddress.resetSeconds} s`,
          { 'Retry-After': String(byAddress.resetSeconds) },
        );
      }
      const { job_id: jobId } = req.params;
      const check = verifyRawLink(ctx.linkSecret, jobId, req.query.expires, req.query.signature);
      if (check === 'expired')
        throw new ApiError(
          410,
          'SERP_LINK_EXPIRED',
          'this link has expired: fetch the job again with output=html for a new one',
        );
      if (check === 'invalid') {
        await ctx.authFailures.failed(req);
        throw new ApiError(403, 'SERP_LINK_INVALID', 'invalid link signature');
      }
      const job = ctx.queries.jobs.byId(jobId);
      if (!job) throw gone();
      const key = ctx.queries.keys.byId(job.keyId);
      if (key?.status !== 'active') {
        throw new ApiError(403, 'SERP_LINK_REVOKED', 'the API key this link was made for has been revoked');
      }
      checkReadCeiling(ctx.limiter, key);
      const doc = ctx.queries.results.byJobId(job.sourceJobId ?? jobId);
      const sent = doc ? await sendRawHtml(req, reply, ctx.blobStore, doc.rawHtmlRef.key) : undefined;
      if (!sent) throw gone();
      return sent;
    },
  });
};
