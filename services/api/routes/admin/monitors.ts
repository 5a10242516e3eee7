import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorBody } from '../../../../contracts/errors.js';
import {
  AlertResponse,
  BestPosition,
  Change,
  DEFAULT_CTR_CURVE,
  HistoryPoint,
  Schedule,
  VisibilityDay,
} from '../../../../contracts/monitors.js';
import type { MonitorDoc } from '../../../../projections/monitors/monitors.js';
import { alertView } from '../../../monitors/commands/monitors.js';
import { changesOf, visibilityOf } from '../../../monitors/views/monitorReads.js';
import { ApiError } from '../../errors.js';
import type { AdminOptions } from './options.js';

/**
 * The dashboard's monitor view (docs/rank-tracking.md): a key's monitors, one keyword's positions over time per
 * domain (the chart), and a monitor's visibility, latest changes and latest alerts (docs/webhooks.md). Read-only; the
 * operator sees every key's.
 */

const AdminMonitor = z.object({
  monitor_id: z.string(),
  name: z.string(),
  keywords: z.array(z.string()),
  domains: z.array(z.string()),
  depth: z.number().int(),
  schedule: Schedule,
  paused: z.boolean(),
  created_at: z.string(),
  last_run_at: z.string().nullable(),
  next_run_at: z.string().nullable(),
});

const Days = z.coerce
  .number({ error: 'days must be a whole number of days' })
  .int('days must be a whole number of days')
  .min(1, 'days must be at least 1')
  .max(366, 'days must be at most 366');

const MonitorParams = z.object({ monitor_id: z.string().max(200) });

const DAY_MS = 86_400_000;

export const adminMonitorRoutes: FastifyPluginAsync<AdminOptions> = async (app, opts) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const admin = { tags: ['admin'], security: [{ adminToken: [] }] };
  const ranks = opts.queries.ranks;
  const now = () => (opts.now?.() ?? new Date()).getTime();
  const monitorOf = (id: string): MonitorDoc => {
    const doc = opts.queries.monitors.byId(id);
    if (!doc) throw new ApiError(404, 'SERP_MONITOR_NOT_FOUND', `no monitor with id ${id}`);
    return doc;
  };
  const view = (doc: MonitorDoc) => ({
    monitor_id: doc.monitorId,
    name: doc.name,
    keywords: doc.keywords,
    domains: doc.domains,
    depth: doc.depth,
    schedule: doc.schedule,
    paused: doc.paused,
    created_at: doc.createdAt,
    last_run_at: doc.lastRunAt ?? null,
    next_run_at: doc.paused ? null : (opts.queries.monitors.scheduleOf(doc.monitorId)?.nextSlot ?? null),
  });

  r.get('/keys/:key_id/monitors', {
    schema: {
      ...admin,
      operationId: 'listKeyMonitors',
      summary: "A key's monitors (rank tracking)",
      params: z.object({ key_id: z.string().max(64) }),
      response: {
        200: z.object({ key_id: z.string(), monitors: z.array(AdminMonitor) }),
        401: ErrorBody,
        404: ErrorBody,
      },
    },
    handler: async (req) => {
      const key = opts.queries.keys.byId(req.params.key_id);
      if (!key) throw new ApiError(404, 'SERP_KEY_NOT_FOUND', `no key with id ${req.params.key_id}`);
      return { key_id: key.keyId, monitors: opts.queries.monitors.ofKey(key.keyId).map(view) };
    },
  });

  r.get('/monitors/:monitor_id/positions', {
    schema: {
      ...admin,
      operationId: 'getMonitorPositions',
      summary: "One keyword's history per domain over the last `days` (the dashboard's chart), and its best ever",
      description:
        'keyword defaults to the monitor’s first. Failed searches are points with `status: failed` and no position (the chart leaves a gap).',
      params: MonitorParams,
      querystring: z.object({ keyword: z.string().max(2048).optional(), days: Days.default(90) }),
      response: {
        200: z.object({
          monitor_id: z.string(),
          keyword: z.string(),
          domains: z.array(z.string()),
          from: z.string(),
          to: z.string(),
          points: z.array(HistoryPoint),
          best: z.array(BestPosition),
        }),
        401: ErrorBody,
        404: ErrorBody,
        422: ErrorBody,
      },
    },
    handler: async (req) => {
      const doc = monitorOf(req.params.monitor_id);
      const keyword = req.query.keyword?.trim().replace(/\s+/g, ' ') ?? doc.keywords[0] ?? '';
      const to = now();
      const from = to - req.query.days * DAY_MS;
      const points = [...ranks.points(doc.monitorId, { from, to }, { keyword })].flat();
      return {
        monitor_id: doc.monitorId,
        keyword,
        domains: doc.domains,
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        points,
        best: ranks.best(doc.monitorId).filter((b) => b.keyword === keyword),
      };
    },
  });

  r.get('/monitors/:monitor_id/summary', {
    schema: {
      ...admin,
      operationId: 'getMonitorSummary',
      summary:
        "A monitor's visibility per domain per day over the last `days`, and its latest changes and alerts (newest first)",
      params: MonitorParams,
      querystring: z.object({
        days: Days.default(30),
        changes: z.coerce.number().int().min(1).max(500).default(50).describe('how many of the latest changes'),
        alerts: z.coerce.number().int().min(1).max(500).default(50).describe('how many of the latest alerts'),
      }),
      response: {
        200: z.object({
          monitor: AdminMonitor,
          visibility: z.array(z.object({ domain: z.string(), days: z.array(VisibilityDay) })),
          changes: z.array(Change),
          alerts: z.array(AlertResponse).describe('the alerts its runs raised in these days, newest first'),
          ctr_curve: z.array(z.number()),
        }),
        401: ErrorBody,
        404: ErrorBody,
        422: ErrorBody,
      },
    },
    handler: async (req) => {
      const doc = monitorOf(req.params.monitor_id);
      const to = now();
      const range = { from: to - req.query.days * DAY_MS, to };
      const changes = changesOf(ranks, doc, range, 3).changes;
      const iso = (ms: number) => new Date(ms).toISOString();
      const alerts = opts.queries.monitors.alertsOf(doc.monitorId, iso(range.from), iso(range.to));
      return {
        monitor: view(doc),
        visibility: visibilityOf(ranks, doc, range).domains,
        changes: changes.slice(-req.query.changes).reverse(),
        alerts: alerts.slice(-req.query.alerts).reverse().map(alertView),
        ctr_curve: [...(doc.ctrCurve ?? DEFAULT_CTR_CURVE)],
      };
    },
  });
};
