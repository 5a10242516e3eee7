import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorBody } from '../../../contracts/errors.js';
import { SerpResult } from '../../../contracts/result.js';
import {
  FailedResponse,
  FetchQuery,
  HtmlLinkResponse,
  type OutputFormat,
  RunningResponse,
  SubmitQuery,
  SubmitSearchBody,
  SubmitSearchResponse,
} from '../../../contracts/search.js';
import type { JobStatusDoc } from '../../../projections/jobStatus/jobStatus.js';
import { terminalStatuses } from '../../../projections/jobStatus/jobStatus.js';
import { nativeResult } from '../../application/searches.js';
import { publicFailureDetail } from '../../crawler/errors.js';
import type { RouteContext } from '../app.js';
import { ApiError } from '../errors.js';
import { signRawLink } from '../signing.js';
import { checkReadCeiling, checkSubmitRate } from './limits.js';

// Documentation only: results are sent pre-serialised (a string skips the response serializer), so the schema
// describes them for generated clients without re-encoding 150 kB per fetch.
const ResultBody = z.union([
  SerpResult.describe('output=json: the native schema'),
  z.record(z.string(), z.unknown()).describe("output=compat: SerpApi's names and envelope"),
]);
const jobNotFound = () => new ApiError(404, 'SERP_JOB_NOT_FOUND', 'job not found');

const baseUrlOf = (ctx: RouteContext, req: FastifyRequest) =>
  ctx.config.publicBaseUrl ?? `${req.protocol}://${req.headers.host ?? 'localhost'}`;

/** Answers a fetch of `job` in `output`: 202 while running, 200 once terminal (DESIGN.md §4). */
export const renderJob = (
  ctx: RouteContext,
  req: FastifyRequest,
  reply: FastifyReply,
  job: JobStatusDoc,
  output: OutputFormat,
  start?: number,
) => {
  if (!terminalStatuses.has(job.status)) return reply.code(202).send({ job_id: job.jobId, status: 'running' });
  if (job.status === 'failed') {
    // the raw reason stays in the event and the logs; the owner gets a fixed line by kind (no URLs, hosts, sockets)
    const detail = publicFailureDetail(job.detail);
    if (output === 'compat') {
      return reply.code(200).send({
        search_metadata: { id: job.jobId, status: 'Error', created_at: job.submittedAt },
        error: detail,
      });
    }
    return reply.code(200).send({ job_id: job.jobId, status: 'failed', detail });
  }
  const doc = ctx.searches.resultOf(job);
  // Terminal in the log but its result not projected yet (read-your-writes fell back to the stream): still running
  // from the reader's side; the next poll has it. Expiry is decided by age alone, before renderJob.
  if (!doc) return reply.code(202).send({ job_id: job.jobId, status: 'running' });
  if (output === 'html') {
    const link = signRawLink(ctx.secrets.linkSecret, baseUrlOf(ctx, req), job.jobId, ctx.config.presignTtlS);
    return reply
      .code(200)
      .send({ job_id: job.jobId, status: job.status, html_url: link.url, expires_at: link.expiresAt });
  }
  const native = nativeResult(job, doc, start);
  const body = output === 'compat' ? ctx.toCompat(native) : native;
  return reply.code(200).type('application/json').send(JSON.stringify(body));
};

const expired = (ctx: RouteContext, job: JobStatusDoc) =>
  Date.now() - Date.parse(job.submittedAt) > ctx.config.retentionDays * 86_400_000;

/** Waits (bounded) for a job to end, for `async: false`. */
const waitForEnd = async (ctx: RouteContext, jobId: string, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await ctx.searches.jobDoc(jobId);
    if (!job || terminalStatuses.has(job.status) || Date.now() >= deadline) return job;
    await new Promise((r) => setTimeout(r, Math.min(50, Math.max(1, deadline - Date.now()))));
  }
};

export const registerSearchRoutes = (app: FastifyInstance, ctx: RouteContext) => {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post('/v1/search', {
    schema: {
      summary: 'Submit a search',
      description:
        'Returns 202 with a queued job, or 200 with `cached: true` when a fresh identical result exists (no quota used). With `async: false` waits up to the sync timeout and answers like a fetch.',
      body: SubmitSearchBody,
      querystring: SubmitQuery,
      response: {
        200: z.union([SubmitSearchResponse, ResultBody]),
        202: z.union([SubmitSearchResponse, RunningResponse]),
        400: ErrorBody,
        401: ErrorBody,
        413: ErrorBody,
        415: ErrorBody,
        422: ErrorBody,
        429: ErrorBody,
      },
    },
    onRequest: async (req) => {
      ctx.authenticate(req);
    },
    preHandler: async (req, reply) => {
      await checkSubmitRate(ctx, req.apiKey!, reply);
    },
    handler: async (req, reply) => {
      const { async: isAsync, ...request } = req.body;
      if (request.location && ctx.resolveLocation && ctx.resolveLocation(request.location) === undefined) {
        throw new ApiError(
          422,
          'SERP_API_UNKNOWN_LOCATION',
          `unknown location "${request.location}": give a country ("Germany"), or a city as "City, Region, Country" ("Austin, Texas, United States") once the geotargets are imported (serp-api locations import)`,
        );
      }
      const out = await ctx.searches.submit(req.apiKey!, request, { correlationId: req.id });
      if (isAsync) {
        const body = { job_id: out.jobId, status: out.status, cached: out.cached };
        if (out.cached) return reply.code(200).send(body);
        return reply.code(202).header('Location', `/v1/search/${out.jobId}`).send(body);
      }
      const job = await waitForEnd(ctx, out.jobId, ctx.config.syncTimeoutMs);
      if (!job) return reply.code(202).send({ job_id: out.jobId, status: 'running' });
      return renderJob(ctx, req, reply, job, req.query.output);
    },
  });

  r.get('/v1/search/:job_id', {
    schema: {
      summary: 'Fetch a job: 202 while running, 200 with the result once terminal',
      // any string: an id that cannot exist is a 404 "job not found", whatever its length
      params: z.object({ job_id: z.string() }),
      querystring: FetchQuery,
      response: {
        200: z.union([HtmlLinkResponse, FailedResponse, ResultBody]),
        202: RunningResponse,
        401: ErrorBody,
        404: ErrorBody,
        410: ErrorBody,
        422: ErrorBody,
        429: ErrorBody,
      },
    },
    onRequest: async (req) => {
      await checkReadCeiling(ctx, ctx.authenticate(req));
    },
    handler: async (req, reply) => {
      const id = req.params.job_id;
      if (!/^[0-9a-f]{24}$/.test(id)) throw jobNotFound();
      const job = await ctx.searches.jobDoc(id);
      if (!job || job.keyId !== req.apiKey!.keyId) throw jobNotFound();
      if (expired(ctx, job)) throw new ApiError(410, 'SERP_JOB_EXPIRED', 'job expired');
      return renderJob(ctx, req, reply, job, req.query.output, req.query.start);
    },
  });
};
