import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { CompatError, CompatResult, CompatSearchQuery } from '../../../../contracts/compat.js';
import type { Priority } from '../../../../contracts/lanes.js';
import { ScreenshotQuery } from '../../../../contracts/screenshots.js';
import { depthOf, GOOGLE_PASS_THROUGH, type SearchRequest, SubmitSearchBody } from '../../../../contracts/search.js';
import type { JobStatusDoc } from '../../../../projections/jobStatus/jobStatus.js';
import { terminalStatuses } from '../../../../projections/jobStatus/jobStatus.js';
import {
  type CompatLinkSettings,
  type CompatPage,
  compatDone,
  compatFailed,
  compatProcessing,
  depthForPage,
} from '../../../answers/compat.js';
import { publicFailureDetail } from '../../../answers/publicFailure.js';
import { ApiError, clip } from '../../errors.js';
import { isGone, sourceOf, waitForEnd } from '../../jobs.js';
import { didYouMean, invalidUuleDetail } from '../../locationCheck.js';
import { sendRawHtml } from '../../render/rawHtml.js';
import { answerKey } from '../../render/stored.js';
import { positionedDoc, sendScreenshot } from '../../screenshots.js';
import type { CompatOptions } from './options.js';

const bad = (message: string) => new ApiError(400, 'SERP_COMPAT_BAD_PARAMETER', message);

/** The query as single strings: a repeated parameter counts once (its first value), like SerpApi's Rails parsing. */
const flat = (query: unknown): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    const first = Array.isArray(v) ? v[0] : v;
    if (typeof first === 'string') out[k] = first;
  }
  return out;
};

const bool = (query: Record<string, string>, name: string): boolean => {
  const v = query[name];
  if (v === undefined || v === '' || v === 'false' || v === '0') return false;
  if (v === 'true' || v === '1') return true;
  throw bad(`${name} must be true or false, not \`${clip(v, 40)}\`.`);
};

const int = (query: Record<string, string>, name: string, min: number, max: number, fallback: number, why: string) => {
  const v = query[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!/^-?\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < min || n > max)
    throw bad(`${name} must be an integer from ${min} to ${max}${why}, not \`${clip(v, 40)}\`.`);
  return n;
};

/** Our names for SerpApi's, where they differ; a validation message names the client's parameter. */
const theirName: Record<string, string> = { keyword: 'q', engine_domain: 'google_domain' };

/**
 * SerpApi's page: `start` into the merged top 100, `num` results from there: 10 by default on `/search` (Google's
 * page), the whole stored search by default when it is fetched by id.
 */
const page = (query: Record<string, string>, num = 10): CompatPage => ({
  start: int(query, 'start', 0, 99, 0, ' (an offset into the top 100)'),
  num: int(query, 'num', 1, 100, num, ' (results in the answer; 100 gives the merged top 100 at once)'),
});

interface ParsedSearch {
  request: SearchRequest;
  /** the lane it waits in (ours: docs/compat.md) */
  priority: Priority;
  async: boolean;
  output: 'json' | 'html';
  page: CompatPage;
}

/**
 * SerpApi's `/search` parameters onto our search request, with SerpApi's error wording
 * (docs/compat.md#statuses-and-errors).
 */
const parseSearch = (query: Record<string, string>, opts: CompatOptions): ParsedSearch => {
  const engine = query.engine ?? 'google';
  if (engine.toLowerCase() !== 'google') throw bad(`Unsupported \`${clip(engine, 40)}\` search engine.`);
  if (!query.q?.trim()) throw bad('Missing query `q` parameter.');
  const device = query.device || undefined;
  if (device !== undefined && !['desktop', 'tablet', 'mobile'].includes(device))
    throw bad(`Unsupported \`${clip(device, 40)}\` device.`);
  const output = query.output || 'json';
  if (output !== 'json' && output !== 'html')
    throw bad(`Unsupported \`${clip(output, 40)}\` output: use json or html.`);
  const isAsync = bool(query, 'async');
  const noCache = bool(query, 'no_cache');
  const priority = query.priority || 'live';
  if (priority !== 'live' && priority !== 'bulk')
    throw bad(`Unsupported \`${clip(priority, 40)}\` priority: use live (the default) or bulk.`);
  if (isAsync && noCache)
    throw bad(
      'async and no_cache should not be used together: an async search is stored, a no_cache one is not reused.',
    );
  // one resolver for every surface (docs/locations.md): a criteria id, a canonical name, "Austin, TX",
  // "Austin,United States"; the request keeps the location as the client wrote it (`location_requested`)
  const location = query.location?.trim() || undefined;
  if (location && opts.resolveLocation && opts.resolveLocation(location) === undefined) {
    const near = didYouMean(location, { resolve: opts.resolveLocation, suggest: opts.suggestLocations });
    throw bad(`Unsupported \`${clip(location, 80)}\` location - location parameter.${near}`);
  }
  const badUule = query.uule ? invalidUuleDetail(query.uule) : undefined;
  if (badUule) throw bad(badUule);
  const body: Record<string, unknown> = {
    keyword: query.q,
    location,
    uule: query.uule || undefined,
    gl: query.gl || undefined,
    hl: query.hl || undefined,
    device,
    engine_domain: query.google_domain || undefined,
    no_cache: noCache,
    ...(flagOn(query.pixel_positions) ? { pixel_positions: true } : {}),
  };
  for (const name of GOOGLE_PASS_THROUGH) if (query[name]) body[name] = query[name];
  const parsed = SubmitSearchBody.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? '');
    throw bad(`${theirName[field] ?? field}: ${issue?.message ?? 'invalid'}`);
  }
  const { async: _a, priority: _p, ...request } = parsed.data;
  const at = page(query);
  // the crawl goes as deep as this page needs: a first page is one Google request (docs/depth.md)
  return { request: { ...request, depth: depthForPage(at) }, priority, async: isAsync, output, page: at };
};

/** SerpApi's flags are `true`/`false`; 1 and 0 are taken too */
const flagOn = (v: string | undefined) => v === 'true' || v === '1';

/** The request as pagination links repeat it: SerpApi's names, never the key. */
const linkQuery = (request: SearchRequest): Record<string, string> => {
  const q: Record<string, string> = { engine: 'google', q: request.keyword };
  if (request.location) q.location = request.location;
  if (request.uule) q.uule = request.uule;
  if (request.gl) q.gl = request.gl;
  if (request.hl) q.hl = request.hl;
  if (request.engine_domain) q.google_domain = request.engine_domain;
  if (request.device && request.device !== 'desktop') q.device = request.device;
  if (request.pixel_positions) q.pixel_positions = 'true';
  for (const name of GOOGLE_PASS_THROUGH) if (request[name] !== undefined) q[name] = String(request[name]);
  return q;
};

/** A search answered in JSON (SerpApi's envelope) or, with output=html, as its raw page. */
const searchAnswer = (description: string) => ({
  description,
  content: { 'application/json': { schema: CompatResult }, 'text/html': { schema: z.string() } },
});
const keyedErrors = { 400: CompatError, 401: CompatError, 404: CompatError, 429: CompatError };

const sendJson = (reply: FastifyReply, status: number, body: unknown) =>
  reply.code(status).type('application/json').send(JSON.stringify(body));

export const searchRoutes: FastifyPluginAsync<CompatOptions> = async (app, opts) => {
  const links = (job: JobStatusDoc): CompatLinkSettings => ({
    ...opts.links,
    baseUrl: opts.baseUrl(),
    query: linkQuery(job.request),
  });

  /**
   * A job in SerpApi's shape: Processing, the Error document (503 on /search, as SerpApi), the result or its HTML.
   * With `storeAs` (a stored search fetched by id) a finished result's answer is kept as bytes under that key and sent
   * from them the next time, with its ETag (304 on a match) and gzip/br when asked, as /v1 sends its own: not for
   * /search, whose every answer is a job of its own.
   */
  const answer = async (
    req: FastifyRequest,
    reply: FastifyReply,
    job: JobStatusDoc,
    at: {
      page: CompatPage;
      output: 'json' | 'html';
      failedStatus: 200 | 503;
      storeAs?: string;
      /** the answer with the first page's pixel positions (docs/screenshots.md#pixel-positions) */
      positions?: boolean;
    },
  ) => {
    const finished = job.status === 'done' || job.status === 'partial';
    if (at.output === 'json' && finished && (at.positions || job.request.pixel_positions) && opts.resultOf(job)) {
      const { doc, metadata } = await positionedDoc(opts.pages, job, opts.resultOf);
      const done = compatDone(job, doc, links(job), at.page) as Record<string, unknown>;
      const meta = done.search_metadata as Record<string, unknown>;
      return sendJson(reply, 200, { ...done, search_metadata: { ...meta, pixel_positions: metadata } });
    }
    if (!terminalStatuses.has(job.status)) return sendJson(reply, 200, compatProcessing(job, links(job)));
    if (job.status === 'failed')
      return sendJson(reply, at.failedStatus, compatFailed(job, links(job), publicFailureDetail(job)));
    const store =
      at.output === 'json' && at.storeAs !== undefined && opts.stored
        ? { answers: opts.stored, key: at.storeAs }
        : undefined;
    const kept = store?.answers.get(store.key);
    if (store && kept) return store.answers.send(req, reply, store.key, kept);
    const doc = opts.resultOf(job);
    if (!doc) return sendJson(reply, 200, compatProcessing(job, links(job)));
    if (at.output === 'html') {
      const sent = await sendRawHtml(req, reply, opts.blobStore, doc.rawHtmlRef.key);
      if (!sent) throw new ApiError(404, 'SERP_RAW_NOT_FOUND', 'No raw HTML is kept for this search.');
      return sent;
    }
    const done = compatDone(job, doc, links(job), at.page);
    // a search Google placed elsewhere answers as a failed one does (docs/locations.md#what-each-surface-answers)
    if ((done.search_metadata as { status: string }).status === 'Error') return sendJson(reply, at.failedStatus, done);
    const body = JSON.stringify(done);
    if (store) return store.answers.send(req, reply, store.key, store.answers.put(store.key, body));
    return reply.code(200).type('application/json').send(body);
  };

  /** A search of this key's, by id: anything else is "not found" (never "someone else's"). */
  const ownJob = async (req: FastifyRequest, id: string) => {
    if (!/^[0-9a-f]{24}$/.test(id)) return undefined;
    const job = await opts.searches.jobDoc(id);
    return job && job.keyId === req.apiKey!.keyId ? job : undefined;
  };

  const compatSecurity: Array<Record<string, string[]>> = [{ apiKeyQuery: [] }, { apiKey: [] }, { bearer: [] }];
  const searchSchema = (operationId: string, summary: string) => ({
    operationId,
    tags: ['compat'],
    summary,
    description:
      "SerpApi's `GET /search`: synchronous unless `async=true`. Without `num`, Google's first page (10 results) and `serpapi_pagination.next`; `num` up to 100 gives the merged top `num` in one answer. The crawl goes `start` + `num` deep; pagination links page through the same stored search with no crawl or quota as far as it goes, and past it are a new search. This key's identical search answered from cache comes back under the same id. Unknown parameters are ignored.",
    security: compatSecurity,
    querystring: CompatSearchQuery,
    response: {
      200: searchAnswer('the search (or, with async=true, its Processing document); output=html: the raw page'),
      ...keyedErrors,
      410: CompatError.describe('a pagination link (search_id) to a search retention has deleted'),
      503: CompatError.extend({ search_metadata: z.record(z.string(), z.unknown()) }).describe(
        'the search failed (Google blocked it), or Google placed it elsewhere even on another route; its quota was released',
      ),
    },
  });

  /**
   * Whether a finished search of this key's answers a page that needs `depth` results: its own depth does, and so
   * does a crawl that ended before its depth (the last page, stop_domain found), which holds all Google had.
   */
  const reaches = (job: JobStatusDoc, depth: number) => {
    if (depthOf(job.request) >= depth) return true;
    return job.sourceJobId === undefined && opts.resultOf(job)?.exhausted === true;
  };

  const search = async (req: FastifyRequest, reply: FastifyReply) => {
    const query = flat(req.query);
    const parsed = parseSearch(query, opts);
    // a pagination link: the same search of this key's, sliced again (no crawl, no quota) when it goes that deep
    if (query.search_id) {
      const job = await ownJob(req, query.search_id);
      if (job && job.request.keyword === parsed.request.keyword && terminalStatuses.has(job.status)) {
        // a link to a purged search says so, as /searches/{id} does: it is not "Processing", nor a new crawl
        if (isGone(job, await sourceOf(opts.searches, job), opts.retentionDays))
          throw new ApiError(
            410,
            'SERP_JOB_EXPIRED',
            'The search expired and has been deleted from the archive: run it again without search_id.',
          );
        if (job.status === 'failed' || reaches(job, depthOf(parsed.request)))
          return answer(req, reply, job, { page: parsed.page, output: parsed.output, failedStatus: 503 });
        // shallower than this page needs: a search of its own below (the cache, else a crawl), docs/depth.md
      }
    }
    const out = await opts.searches.submit(
      req.apiKey!,
      parsed.request,
      { correlationId: req.id },
      undefined,
      parsed.priority,
    );
    req.submittedJobId = out.jobId;
    // This key's own search answered from cache is that search again, id and all, as SerpApi replays it; the hit is
    // still recorded as a free job of its own (docs/depth.md). Another key's (SERP_CACHE_SCOPE=shared) stays apart.
    const replayed = out.sourceJobId ? await opts.searches.jobDoc(out.sourceJobId) : undefined;
    const job =
      replayed && replayed.keyId === req.apiKey!.keyId
        ? replayed
        : parsed.async
          ? await opts.searches.jobDoc(out.jobId)
          : await waitForEnd(opts.searches, out.jobId, opts.syncTimeoutMs);
    if (!job) throw new ApiError(500, 'SERP_COMPAT_LOST', 'the search was accepted but cannot be read back');
    return answer(req, reply, job, { page: parsed.page, output: parsed.output, failedStatus: 503 });
  };
  // the query is read by parseSearch (lenient: unknown parameters are ignored), the schema only documents it
  const lenient = () => (data: unknown) => ({ value: data });

  for (const [url, operationId] of [
    ['/search', 'compatSearch'],
    ['/search.json', 'compatSearchJson'],
  ] as const) {
    app.get(url, {
      config: { limit: 'submit' },
      validatorCompiler: lenient,
      schema: searchSchema(operationId, `Run a search (SerpApi's ${url})`),
      handler: search,
    });
  }

  /** `/searches/{id}.png` and `.webp`: the archive's search as an image (docs/compat.md#screenshots) */
  const screenshot = async (
    req: FastifyRequest,
    reply: FastifyReply,
    id: string,
    format: 'png' | 'webp',
    query: Record<string, string>,
  ) => {
    const parsed = ScreenshotQuery.safeParse({ ...query, format });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw bad(`${String(issue?.path[0] ?? '')}: ${issue?.message ?? 'invalid'}`);
    }
    const job = await ownJob(req, id);
    if (!job) throw new ApiError(404, 'SERP_JOB_NOT_FOUND', 'Search not found.');
    if (isGone(job, await sourceOf(opts.searches, job), opts.retentionDays))
      throw new ApiError(410, 'SERP_JOB_EXPIRED', 'The search expired and has been deleted from the archive.');
    return sendScreenshot(opts.pages, req, reply, job, opts.resultOf, parsed.data);
  };

  app.get('/searches/:search_id', {
    config: { limit: 'read' },
    validatorCompiler: lenient,
    schema: {
      operationId: 'compatGetSearch',
      tags: ['compat'],
      summary:
        "A stored search by id (SerpApi's Search Archive): `{id}`, `{id}.json` or `{id}.html`; `{id}.png` or `{id}.webp`: its first page as an image",
      security: compatSecurity,
      params: z.object({
        search_id: z.string().describe('24 hex characters, optionally with .json, .html, .png or .webp'),
      }),
      querystring: z.object({
        output: z.enum(['json', 'html']).optional(),
        pixel_positions: z.enum(['true', 'false', '1', '0']).optional(),
        viewport: z.string().optional().describe('.png/.webp: 1 for the first screen only'),
        width: z.string().optional().describe('.png/.webp: CSS pixels, 320 to 1920'),
        scale: z.string().optional().describe('.png/.webp: device pixels per CSS pixel, 1 to 3'),
        start: z.string().optional(),
        num: z.string().optional(),
        api_key: z.string().optional(),
      }),
      response: {
        200: {
          description: 'the search: Processing while it runs, then the result (or its raw HTML, or its image)',
          content: {
            ...searchAnswer('').content,
            'image/png': { schema: z.string().meta({ format: 'binary' }) },
            'image/webp': { schema: z.string().meta({ format: 'binary' }) },
          },
        },
        409: CompatError.describe('.png/.webp: the search has not finished, or it failed'),
        422: CompatError.describe('.png/.webp: the stored page cannot be rendered'),
        503: CompatError.describe('.png/.webp: the renderer is busy or has no Chromium, or ran past its deadline'),
        304: z.null().describe('not modified: the If-None-Match ETag is current (a finished search in json)'),
        ...keyedErrors,
        410: CompatError,
      },
    },
    handler: async (req, reply) => {
      const query = flat(req.query);
      const raw = (req.params as { search_id: string }).search_id;
      const m = /^(.*?)(?:\.(json|html|png|webp))?$/.exec(raw)!;
      const output = m[2] ?? query.output ?? 'json';
      if (output === 'png' || output === 'webp') return screenshot(req, reply, m[1] as string, output, query);
      if (output !== 'json' && output !== 'html')
        throw bad(`Unsupported \`${clip(output, 40)}\` output: use json or html (or {id}.png, {id}.webp).`);
      const job = await ownJob(req, m[1]);
      if (!job) throw new ApiError(404, 'SERP_JOB_NOT_FOUND', 'Search not found.');
      const source = await sourceOf(opts.searches, job);
      if (isGone(job, source, opts.retentionDays))
        throw new ApiError(410, 'SERP_JOB_EXPIRED', 'The search expired and has been deleted from the archive.');
      // the search as it was asked: a compat search's depth is its start + num, a /v1 search's its own depth
      const at = page(query, depthOf(job.request));
      const storeAs = answerKey(job.jobId, `compat-archive|${at.start}|${at.num}`, source, true);
      const positions = flagOn(query.pixel_positions);
      return answer(req, reply, job, {
        page: at,
        output,
        failedStatus: 200,
        ...(positions ? { positions } : { storeAs }),
      });
    },
  });
};
