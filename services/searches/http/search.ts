import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CompatResult } from '../../../contracts/compat.js';
import { ErrorBody } from '../../../contracts/errors.js';
import { SerpResult } from '../../../contracts/result.js';
import {
  FailedResponse,
  FetchQuery,
  HtmlLinkResponse,
  RunningResponse,
  SubmitQuery,
  SubmitSearchBody,
  SubmitSearchResponse,
} from '../../../contracts/search.js';
import type { JobStatusDoc } from '../../../projections/jobStatus/jobStatus.js';
import { compatResult } from '../../answers/compat.js';
import { encodingFor } from '../../answers/encoding.js';
import { nativeResult } from '../../answers/native.js';
import { type Rendered, renderJob } from '../../answers/render.js';
import { ApiError } from '../../api/errors.js';
import { isGone, sourceOf, waitForEnd } from '../../api/jobs.js';
import { invalidUuleDetail, unknownLocationDetail } from '../../api/locationCheck.js';
import { answerKey } from '../../api/render/stored.js';
import type { V1Options } from '../../api/routes/v1/options.js';
import { positionedDoc } from '../../api/screenshots.js';
import { createServerTiming } from '../../api/serverTiming.js';

// Documentation only: results are sent pre-serialised (a string skips the response serializer), so the schema
// describes them for generated clients without re-encoding 150 kB per fetch.
const ResultBody = z.union([
  SerpResult.describe('output=json: the native schema'),
  CompatResult.describe("output=compat: SerpApi's names and envelope"),
]);
const jobNotFound = () => new ApiError(404, 'SERP_JOB_NOT_FOUND', 'job not found');

const send = (reply: FastifyReply, r: Rendered) =>
  'json' in r ? reply.code(r.status).type('application/json').send(r.json) : reply.code(r.status).send(r.body);

export const searchRoutes: FastifyPluginAsync<V1Options> = async (app, opts) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const render = (
    req: FastifyRequest,
    job: JobStatusDoc,
    output: z.infer<typeof FetchQuery>['output'],
    start?: number,
  ) => renderJob(opts.render, job, output, { start, baseUrl: opts.baseUrl() });

  /**
   * A finished json or compat answer with the first page's pixel positions, when asked for (the fetch's flag, else the
   * search's own `pixel_positions`): not kept with the stored answers, since the positions are read from their own
   * blob (docs/screenshots.md#pixel-positions). Undefined when positions are not wanted or the result is not there.
   */
  const positioned = async (
    job: JobStatusDoc,
    output: z.infer<typeof FetchQuery>['output'],
    wanted: boolean,
    start?: number,
  ): Promise<Rendered | undefined> => {
    if (!wanted || output === 'html' || (job.status !== 'done' && job.status !== 'partial')) return undefined;
    if (!opts.render.resultOf(job)) return undefined;
    const { doc, metadata } = await positionedDoc(opts.pages, job, opts.render.resultOf);
    const native = nativeResult(job, doc, start);
    const answer = output === 'json' ? native : compatResult(native);
    const meta = answer.search_metadata as Record<string, unknown>;
    return {
      status: 200,
      json: JSON.stringify({ ...answer, search_metadata: { ...meta, pixel_positions: metadata } }),
    };
  };

  r.post('/search', {
    config: { limit: 'submit' },
    schema: {
      operationId: 'submitSearch',
      tags: ['native'],
      summary: 'Submit a search',
      description:
        'Returns 202 with a queued job, or 200 with `cached: true` when a fresh identical result exists (no quota used). With `async: false` waits up to the sync timeout and answers like a fetch.',
      body: SubmitSearchBody,
      querystring: SubmitQuery,
      response: {
        // async: false answers like a fetch: a link, a failure or the result
        200: z.union([SubmitSearchResponse, HtmlLinkResponse, FailedResponse, ResultBody]),
        202: z.union([SubmitSearchResponse, RunningResponse]),
        400: ErrorBody,
        401: ErrorBody,
        413: ErrorBody,
        415: ErrorBody,
        422: ErrorBody,
        429: ErrorBody,
      },
    },
    handler: async (req, reply) => {
      const { async: isAsync, priority, ...request } = req.body;
      if (request.location && opts.resolveLocation && opts.resolveLocation(request.location) === undefined) {
        const lookup = { resolve: opts.resolveLocation, suggest: opts.suggestLocations };
        throw new ApiError(422, 'SERP_API_UNKNOWN_LOCATION', unknownLocationDetail(request.location, lookup));
      }
      const badUule = request.uule && invalidUuleDetail(request.uule);
      if (badUule) throw new ApiError(422, 'SERP_API_INVALID_UULE', badUule);
      const out = await opts.searches.submit(req.apiKey!, request, { correlationId: req.id }, undefined, priority);
      req.submittedJobId = out.jobId;
      if (isAsync) {
        const body = { job_id: out.jobId, status: out.status, cached: out.cached };
        if (out.cached) return reply.code(200).send(body);
        const queue = opts.queuePositions?.ofNew(out.jobId, out.lane, req.apiKey!.keyId, out.weight);
        // sent as text: the submit's hot path, and a body built here from known values, is not encoded again by the
        // response schema (which still documents it)
        return (reply as FastifyReply)
          .code(202)
          .header('Location', `/v1/search/${out.jobId}`)
          .type('application/json')
          .send(JSON.stringify({ ...body, ...(queue ? { queue } : {}) }));
      }
      const job = await waitForEnd(opts.searches, out.jobId, opts.syncTimeoutMs);
      if (!job) {
        const queue = opts.render.queuePosition?.(out.jobId);
        return reply.code(202).send({ job_id: out.jobId, status: 'running', ...(queue ? { queue } : {}) });
      }
      const { output } = req.query;
      const withPositions = await positioned(job, output, job.request.pixel_positions === true);
      if (withPositions) return send(reply, withPositions);
      if ((output === 'json' || output === 'compat') && (job.status === 'done' || job.status === 'partial')) {
        // made on the pipeline thread when there is one: a cached search's answer, a job of its own, is rendered
        // from the source's stored document each time (~4 ms of the event loop)
        const elsewhere = await opts.render.renderElsewhere?.(job, output, { baseUrl: opts.baseUrl() });
        if (elsewhere) return send(reply, { status: 200, json: elsewhere.json });
      }
      return send(reply, render(req, job, output));
    },
  });

  r.get('/search/:job_id', {
    config: { limit: 'read' },
    schema: {
      operationId: 'getSearch',
      tags: ['native'],
      summary: 'Fetch a job: 202 while running, 200 with the result once terminal',
      description:
        'A finished result (json or compat) carries an ETag: send it back as If-None-Match to get 304 while it is unchanged. Results are sent gzip- or brotli-compressed when Accept-Encoding asks.',
      // any string: an id that cannot exist is a 404 "job not found", whatever its length
      params: z.object({ job_id: z.string() }),
      querystring: FetchQuery,
      response: {
        200: z.union([HtmlLinkResponse, FailedResponse, ResultBody]),
        202: RunningResponse,
        304: z.null().describe('not modified: the If-None-Match ETag is current (finished results only)'),
        401: ErrorBody,
        404: ErrorBody,
        410: ErrorBody,
        422: ErrorBody,
        429: ErrorBody,
      },
    },
    handler: async (req, reply) => {
      const timing = createServerTiming({ sinceRequest: () => reply.elapsedTime, before: req.checkTimes });
      const id = req.params.job_id;
      if (!/^[0-9a-f]{24}$/.test(id)) throw jobNotFound();
      const { job, source } = await timing.time('job', async () => {
        const job = await opts.searches.jobDoc(id);
        if (!job || job.keyId !== req.apiKey!.keyId) throw jobNotFound();
        return { job, source: await sourceOf(opts.searches, job) };
      });
      if (isGone(job, source, opts.retentionDays)) throw new ApiError(410, 'SERP_JOB_EXPIRED', 'job expired');
      const { output, start } = req.query;
      const withPositions = await positioned(
        job,
        output,
        req.query.pixel_positions ?? job.request.pixel_positions === true,
        start,
      );
      if (withPositions) return send(reply, withPositions);
      if (output === 'html' || (job.status !== 'done' && job.status !== 'partial')) {
        return send(reply, render(req, job, output, start));
      }
      // a finished result is stored bytes: rendered once per version of its result; compat's links are signed
      const key = answerKey(job.jobId, `${output}|${start ?? ''}`, source, output === 'compat');
      let stored = opts.stored.get(key);
      if (stored) timing.note('answer', 'stored');
      const renderElsewhere = opts.render.renderElsewhere;
      if (!stored && renderElsewhere) {
        const elsewhere = await timing.time('pipeline', () =>
          renderElsewhere(job, output, {
            start,
            baseUrl: opts.baseUrl(),
            encoding: encodingFor(req.headers['accept-encoding']),
          }),
        );
        if (elsewhere) {
          timing.note('answer', 'pipeline');
          stored = opts.stored.get(key) ?? opts.stored.put(key, elsewhere.json, elsewhere.etag, elsewhere.compressed);
        }
      }
      if (!stored) {
        const rendered = await timing.time('render', () => render(req, job, output, start));
        if (!('json' in rendered)) return send(reply, rendered);
        timing.note('answer', 'rendered');
        stored = opts.stored.put(key, rendered.json);
      }
      return opts.stored.send(req, reply, key, stored, timing);
    },
  });
};
