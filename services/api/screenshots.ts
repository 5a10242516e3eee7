import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ScreenshotQuery } from '../../contracts/screenshots.js';
import type { JobStatusDoc } from '../../projections/jobStatus/jobStatus.js';
import type { SearchResultDoc } from '../../projections/searchResults/searchResults.js';
import { RenderError } from '../render/errors.js';
import type { PageViews } from '../render/pageViews.js';
import { pixelPositionsMetadata, withPixelPositions } from '../render/withPositions.js';
import { ApiError } from './errors.js';

/** a render's refusal as the api's error: its status, code and detail (docs/screenshots.md#screenshots) */
export const renderFailure = (err: unknown): never => {
  if (err instanceof RenderError) throw new ApiError(err.status, err.code, err.message, err.headers);
  throw err;
};

/** the image format a request asks for: `format`, else the first image type its Accept header names that we make */
export const imageFormat = (format: 'png' | 'webp' | undefined, accept: string | undefined): 'png' | 'webp' => {
  if (format) return format;
  for (const part of (accept ?? '').toLowerCase().split(',')) {
    const [type, q] = part.trim().split(';');
    if (q && /^\s*q=0(\.0*)?\s*$/.test(q)) continue;
    if (type === 'image/webp') return 'webp';
    if (type === 'image/png') return 'png';
  }
  return 'png';
};

/**
 * The page a finished search was read from, or why there is none: 409 while it runs or when it failed (no page was
 * kept), 410 once its page is gone.
 */
export const renderablePage = (
  job: JobStatusDoc,
  resultOf: (job: JobStatusDoc) => SearchResultDoc | undefined,
): { jobId: string; doc: SearchResultDoc } => {
  if (job.status === 'queued' || job.status === 'running')
    throw new ApiError(
      409,
      'SERP_JOB_NOT_FINISHED',
      'the search has not finished: poll it until it has, then ask again',
    );
  if (job.status === 'failed')
    throw new ApiError(409, 'SERP_JOB_FAILED', 'the search failed: Google gave no page to render');
  const doc = resultOf(job);
  if (!doc) throw new ApiError(409, 'SERP_JOB_NOT_FINISHED', 'the search has just finished: ask again in a moment');
  return { jobId: job.sourceJobId ?? job.jobId, doc };
};

/** answers a screenshot of a finished search (both surfaces) */
export const sendScreenshot = async (
  pages: PageViews,
  req: FastifyRequest,
  reply: FastifyReply,
  job: JobStatusDoc,
  resultOf: (job: JobStatusDoc) => SearchResultDoc | undefined,
  query: ScreenshotQuery,
): Promise<FastifyReply> => {
  const { jobId, doc } = renderablePage(job, resultOf);
  const shot = await pages
    .screenshot(jobId, doc, job.request.device, {
      format: imageFormat(query.format, req.headers.accept),
      viewport: query.viewport ?? false,
      ...(query.width !== undefined ? { width: query.width } : {}),
      ...(query.scale !== undefined ? { scale: query.scale } : {}),
    })
    .catch(renderFailure);
  return reply
    .code(200)
    .type(shot.contentType)
    .header('cache-control', 'private, max-age=86400')
    .header('vary', 'accept')
    .header('x-serp-render', shot.cached ? 'kept' : 'rendered')
    .send(shot.image);
};

/**
 * A finished search's result document with its first page's pixel positions in it (one render, then kept), and the
 * `search_metadata.pixel_positions` to add to whatever answer is made of it (docs/screenshots.md#pixel-positions).
 */
export const positionedDoc = async (
  pages: PageViews,
  job: JobStatusDoc,
  resultOf: (job: JobStatusDoc) => SearchResultDoc | undefined,
): Promise<{ doc: SearchResultDoc; metadata: ReturnType<typeof pixelPositionsMetadata> }> => {
  const { jobId, doc } = renderablePage(job, resultOf);
  const positions = await pages.positions(jobId, doc, job.request.device).catch(renderFailure);
  return {
    doc: { ...doc, result: withPixelPositions(doc.result, positions) },
    metadata: pixelPositionsMetadata(positions),
  };
};
