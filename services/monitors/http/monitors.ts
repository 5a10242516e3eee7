import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  AlertList,
  ChangesQuery,
  ChangesResponse,
  CreateMonitorBody,
  HistoryQuery,
  HistoryResponse,
  MonitorList,
  MonitorResponse,
  PatchMonitorBody,
  RangeQuery,
  RunMonitorBody,
  RunResponse,
  rangeBounds,
  TrackedDomain,
  VisibilityResponse,
} from '../../../contracts/monitors.js';
import { ApiError } from '../../api/errors.js';
import { invalidUuleDetail, unknownLocationDetail } from '../../api/locationCheck.js';
import { errors } from '../../api/routes/v1/monitorErrors.js';
import type { V1Options } from '../../api/routes/v1/options.js';
import { wired } from '../../api/wiring.js';
import { changesOf, historyCsvOf, historyJson, visibilityOf } from '../views/monitorReads.js';

/** what a read of one monitor over a date range can answer besides 200 (history, visibility, changes, alerts) */
const rangeReadErrors = {
  401: errors.unauthorized,
  404: errors.notFound,
  422: errors.invalidRange,
  429: errors.rate,
  503: errors.unavailable,
} as const;

/** a monitor as written: with what it leaves the fleet short of, when it does */
const withWarnings = <T extends object>(view: T, warnings: string[]) =>
  warnings.length ? { ...view, warnings } : view;

// the id the examples show stands for the caller's own monitor (docs/api.md#examples)
const params = z.object({
  monitor_id: z
    .string()
    .max(200)
    .meta({ examples: ['mon_3f9a1c2b7d4e5f60718293a4'] }),
});
const tags = ['rank tracking'];

/** `/v1/monitors`: rank tracking (docs/rank-tracking.md). A monitor of another key answers 404, as one that does not exist. */
export const monitorRoutes: FastifyPluginAsync<V1Options> = async (app, opts) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const monitors = wired(opts.monitors, '/v1/monitors', 'monitor service');
  const ranks = opts.queries.ranks;
  const checkLocation = (location: string | undefined) => {
    if (location && opts.resolveLocation && opts.resolveLocation(location) === undefined) {
      const lookup = { resolve: opts.resolveLocation, suggest: opts.suggestLocations };
      throw new ApiError(422, 'SERP_API_UNKNOWN_LOCATION', unknownLocationDetail(location, lookup));
    }
  };

  r.post('/monitors', {
    config: { limit: 'read' },
    schema: {
      operationId: 'createMonitor',
      tags,
      summary: 'Create a monitor: keywords, domains (yours first), targeting, depth and schedule',
      description:
        'Answers 201 with the monitor. Its first run is the slot in progress (searched at once), then one per slot. With `backfill: true`, earlier stored searches of this key with the same keyword and targeting become history first.',
      body: CreateMonitorBody,
      response: {
        201: MonitorResponse,
        400: errors.badJson,
        401: errors.unauthorized,
        413: errors.tooLarge,
        415: errors.mediaType,
        422: errors.invalidMonitor,
        429: errors.rate,
        503: errors.unavailable,
      },
    },
    handler: async (req, reply) => {
      checkLocation(req.body.location);
      const badUule = req.body.uule && invalidUuleDetail(req.body.uule);
      if (badUule) throw new ApiError(422, 'SERP_API_INVALID_UULE', badUule);
      const doc = await monitors.create(req.apiKey!, req.body, { correlationId: req.id });
      return reply
        .code(201)
        .header('Location', `/v1/monitors/${doc.monitorId}`)
        .send(withWarnings(monitors.view(doc), monitors.warnings(doc)));
    },
  });

  r.get('/monitors', {
    config: { limit: 'read' },
    schema: {
      operationId: 'listMonitors',
      tags,
      summary: "This key's monitors",
      response: { 200: MonitorList, 401: errors.unauthorized, 429: errors.rate, 503: errors.unavailable },
    },
    handler: async (req) => ({
      monitors: opts.queries.monitors.ofKey(req.apiKey!.keyId).map((d) => monitors.view(d)),
    }),
  });

  r.get('/monitors/:monitor_id', {
    config: { limit: 'read' },
    schema: {
      operationId: 'getMonitor',
      tags,
      summary: 'One monitor',
      params,
      response: {
        200: MonitorResponse,
        401: errors.unauthorized,
        404: errors.notFound,
        422: errors.invalidParams,
        429: errors.rate,
        503: errors.unavailable,
      },
    },
    handler: async (req) => monitors.view(monitors.owned(req.apiKey!, req.params.monitor_id)),
  });

  r.patch('/monitors/:monitor_id', {
    config: { limit: 'read' },
    schema: {
      operationId: 'changeMonitor',
      tags,
      summary: 'Add or remove keywords and domains; change the name, schedule, depth, CTR curve; pause or resume',
      params,
      body: PatchMonitorBody,
      response: {
        200: MonitorResponse,
        400: errors.badJson,
        401: errors.unauthorized,
        404: errors.notFound,
        415: errors.mediaType,
        422: errors.invalidChange,
        429: errors.rate,
        503: errors.unavailable,
      },
    },
    handler: async (req) => {
      const doc = await monitors.change(req.apiKey!, req.params.monitor_id, req.body, { correlationId: req.id });
      return withWarnings(monitors.view(doc), monitors.warnings(doc));
    },
  });

  r.delete('/monitors/:monitor_id', {
    config: { limit: 'read' },
    schema: {
      operationId: 'deleteMonitor',
      tags,
      summary: 'Delete a monitor: it stops, and its history is no longer served',
      params,
      response: {
        204: z.null().describe('deleted'),
        401: errors.unauthorized,
        404: errors.notFound,
        422: errors.invalidParams,
        429: errors.rate,
        503: errors.unavailable,
      },
    },
    handler: async (req, reply) => {
      await monitors.remove(req.apiKey!, req.params.monitor_id, { correlationId: req.id });
      return reply.code(204).send(null);
    },
  });

  r.post('/monitors/:monitor_id/runs', {
    // a run is submissions: the request counts against the key's rate, as a search does
    config: { limit: 'submit' },
    schema: {
      operationId: 'runMonitor',
      tags,
      summary: 'Search every keyword now: one ordinary search job per keyword (quota, rate limit, raw HTML)',
      description:
        'Answers 202 with the run and its jobs. Jobs are submitted at the key rate (the first at once): each exists from its `submit_at` and is polled like any job. Runs crawl fresh unless `no_cache: false`. One manual run of a monitor at a time: a second while one is in progress is a 409 naming it. The request counts against the key rate (429 past it).',
      params,
      body: RunMonitorBody,
      response: {
        202: RunResponse,
        400: errors.badJson,
        401: errors.unauthorized,
        404: errors.notFound,
        409: errors.runInProgress,
        415: errors.mediaType,
        422: errors.invalidParams,
        429: errors.rate,
        503: errors.unavailable,
      },
    },
    handler: async (req, reply) => {
      const out = await monitors.run(req.apiKey!, req.params.monitor_id, req.body.no_cache, { correlationId: req.id });
      return reply.code(202).send(out);
    },
  });

  r.get('/monitors/:monitor_id/history', {
    config: { limit: 'read' },
    schema: {
      operationId: 'getMonitorHistory',
      tags,
      summary: 'Positions per keyword × domain × search, oldest first (JSON, or CSV of the whole history)',
      description:
        '`status` is `ranked` (with position and url), `not_ranked` (searched, not in the top `depth`) or `failed` (the search failed or was blocked: never a position). A monitor with `pixel_positions` adds `pixels_from_top` and `above_the_fold` to each search it measured. CSV header: `keyword,domain,checked_at,status,position,url,failure,job_id,pixels_from_top,above_the_fold` (the last two empty where a search was not measured in pixels).',
      params,
      querystring: HistoryQuery,
      response: {
        200: {
          description: 'the points',
          content: {
            'application/json': { schema: HistoryResponse },
            'text/csv': {
              schema: z.string().meta({
                examples: [
                  'keyword,domain,checked_at,status,position,url,failure,job_id,pixels_from_top,above_the_fold\ncoffee shop,example.com,2026-03-01T00:03:12.000Z,ranked,4,https://example.com/coffee,,0195a3c4b5d6a1b2c3d4e5f6,,\n',
                ],
              }),
            },
          },
        },
        ...rangeReadErrors,
      },
    },
    handler: async (req, reply) => {
      const doc = monitors.owned(req.apiKey!, req.params.monitor_id);
      const { keyword, domain, from, to, format } = req.query;
      if (domain !== undefined && !TrackedDomain.safeParse(domain).success) {
        throw new ApiError(
          422,
          'SERP_API_INVALID_REQUEST',
          `querystring domain: "${domain.slice(0, 100)}" is not a tracked-domain pattern such as "example.com"`,
        );
      }
      const filter = {
        ...(keyword !== undefined ? { keyword: keyword.trim().replace(/\s+/g, ' ') } : {}),
        ...(domain !== undefined ? { domain: domain.trim().toLowerCase() } : {}),
      };
      const range = rangeBounds(from, to);
      if (format === 'csv') {
        return (reply as FastifyReply)
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${doc.monitorId}-history.csv"`)
          .send(historyCsvOf(ranks.monthChecks(doc.monitorId, range, filter.keyword), filter.domain));
      }
      const points = ranks.points(doc.monitorId, range, filter);
      return (reply as FastifyReply).type('application/json; charset=utf-8').send(historyJson(doc.monitorId, points));
    },
  });

  r.get('/monitors/:monitor_id/visibility', {
    config: { limit: 'read' },
    schema: {
      operationId: 'getMonitorVisibility',
      tags,
      summary: 'Per domain per UTC day: average position, ranked, top 3/10/100, share of voice, AI Overview citations',
      params,
      querystring: RangeQuery,
      response: {
        200: VisibilityResponse,
        ...rangeReadErrors,
      },
    },
    handler: async (req) => {
      const doc = monitors.owned(req.apiKey!, req.params.monitor_id);
      return visibilityOf(ranks, doc, rangeBounds(req.query.from, req.query.to));
    },
  });

  r.get('/monitors/:monitor_id/changes', {
    config: { limit: 'read' },
    schema: {
      operationId: 'getMonitorChanges',
      tags,
      summary: 'What changed between consecutive successful searches of each keyword, and the best position ever',
      params,
      querystring: ChangesQuery,
      response: {
        200: ChangesResponse,
        ...rangeReadErrors,
      },
    },
    handler: async (req) => {
      const doc = monitors.owned(req.apiKey!, req.params.monitor_id);
      return changesOf(ranks, doc, rangeBounds(req.query.from, req.query.to), req.query.min_move);
    },
  });
  r.get('/monitors/:monitor_id/alerts', {
    config: { limit: 'read' },
    schema: {
      operationId: 'getMonitorAlerts',
      tags,
      summary:
        "A monitor's alerts (moves, tops entered or left, competitors above, URL and feature changes, failed runs)",
      description:
        'Computed when each run completes from its checks, as the monitor `alerts` settings ask; each is also a `monitor.alert` webhook delivery. A failed search never raises a "dropped out" alert.',
      params,
      querystring: RangeQuery,
      response: {
        200: AlertList,
        ...rangeReadErrors,
      },
    },
    handler: async (req) => {
      const doc = monitors.owned(req.apiKey!, req.params.monitor_id);
      const { from, to } = rangeBounds(req.query.from, req.query.to);
      return { monitor_id: doc.monitorId, alerts: monitors.alerts(doc.monitorId, from, to) };
    },
  });
};
