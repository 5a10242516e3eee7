import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorBody } from '../../../../contracts/errors.js';
import { LANES } from '../../../../contracts/lanes.js';
import type { ReadModelQueries } from '../../../../projections/index.js';
import { terminalStatuses } from '../../../../projections/jobStatus/jobStatus.js';
import type { OutboxDoc } from '../../../../projections/webhooks/webhooks.js';
import { currentRoutes } from '../../../fairShare/capacity.js';
import { demandAgainstCapacity } from '../../../fairShare/demand.js';
import { ApiError } from '../../errors.js';
import type { AdminOptions } from './options.js';
import { queueView } from './queueView.js';

const DayUsage = z.object({
  day: z.string().describe('UTC day, YYYY-MM-DD'),
  searches: z.number().int().describe('searches submitted'),
  cached: z.number().int().describe('answered from cache (free)'),
  reserved: z.number().int().describe('charged against the quota when submitted'),
  released: z.number().int().describe('charges handed back that day (failed jobs)'),
});

const RecentJob = z.object({
  job_id: z.string(),
  keyword: z.string(),
  status: z.enum(['queued', 'running', 'done', 'partial', 'failed']),
  cached: z.boolean(),
  failure_kind: z.string().optional().describe('captcha, js_challenge, timeout, …: why a failed job failed'),
  attempts: z.number().int(),
  pages: z.number().int().optional(),
  submitted_at: z.string(),
  completed_at: z.string().optional(),
});

const HourOutcomes = z.object({
  hour: z.string().describe('UTC hour, YYYY-MM-DDTHH'),
  submitted: z.number().int(),
  cached: z.number().int(),
  done: z.number().int(),
  partial: z.number().int(),
  failed: z.record(z.string(), z.number().int()).describe('final failures by kind'),
});

const RouteHealth = z.object({
  route: z.string().describe('proxy-N (its place in SERP_PROXY_URLS, from 1) or direct'),
  proxy: z.string().optional().describe("the proxy's host:port (never its credentials)"),
  rate_rpm: z.number().nullable().describe('the pace it is allowed, Google requests a minute (null: pacing off)'),
  requests_last_hour: z.number().int().describe('Google requests of the crawls that ended in the last hour'),
  blocks_last_hour: z.number().int().describe('of those, answered with a block'),
  placed_last_hour: z
    .number()
    .int()
    .describe('result pages whose place was judged against the place asked for (docs/locations.md#the-check)'),
  misplaced_last_hour: z
    .number()
    .int()
    .describe('of those, placed elsewhere by Google (mismatched, or only the region or country): retried elsewhere'),
  places_elsewhere: z
    .boolean()
    .describe(
      'the route keeps placing searches elsewhere (3 or more in the hour, and at least 1 in 5 of its judged pages): a route to drop for local work',
    ),
  places: z
    .array(
      z.object({
        country: z.string(),
        level: z.enum(['country', 'region', 'city']),
        honour: z.number().describe('its chance of honouring the place, from its recent pages there'),
        judged: z.number().describe('pages judged there, older ones weighing less'),
        avoided: z
          .boolean()
          .describe('set aside for located searches of the place; tried again one search in 20 (docs/locations.md)'),
      }),
    )
    .describe("its record of honouring each place it served, which located searches' routes follow"),
  cooling_until: z.string().nullable().describe('resting after a block until then (null: not resting)'),
  reported_at: z.string().describe("the last crawl's report of it"),
});

/**
 * A route that keeps placing searches elsewhere (its proxy's own address wins over the uule): 3 or more in the last
 * hour, and at least 1 in 5 of the pages judged on it (docs/locations.md#routes-that-place-searches-elsewhere).
 */
const placesElsewhere = (r: { placed: number; misplaced: number }) => r.misplaced >= 3 && r.misplaced * 5 >= r.placed;

const Outbox = z.object({
  pending: z.number().int().describe('webhook deliveries waiting for an attempt (docs/webhooks.md)'),
  due: z.number().int().describe('of those, due now (not yet sent, or their next retry is due)'),
  retrying: z.number().int().describe('of those, waiting for a retry after a failed attempt'),
  sending: z.number().int().describe('of those, claimed by a worker and being sent'),
  oldest_scheduled_at: z.string().nullable().describe('when the oldest one was scheduled (null: none waits)'),
  by_type: z.record(z.string(), z.number().int()).describe('waiting deliveries per event type'),
});

const LaneView = z.object({
  lane: z.enum(LANES),
  waiting: z.number().int().describe('jobs not started yet: in the fair scheduler or on the work queue'),
  waiting_pages: z.number().int().describe('Google pages those jobs ask for at most'),
  crawling: z.number().int().describe('jobs a crawler is on'),
  top_keys: z
    .array(
      z.object({
        key_id: z.string(),
        prefix: z.string().optional().describe("the key's display prefix"),
        label: z.string().optional(),
        waiting: z.number().int(),
        waiting_pages: z.number().int(),
        crawling: z.number().int(),
      }),
    )
    .describe(
      'the keys with jobs of the lane not yet ended: most pages waiting first, then most crawling (at most 5); a key whose jobs all crawl is listed too',
    ),
});

const JobsOpen = z.object({
  waiting: z.number().int().describe('the lanes’ waiting jobs summed'),
  crawling: z.number().int().describe('the lanes’ crawling jobs summed'),
  oldest_waiting_since: z.string().nullable().describe('when the job waiting longest was submitted (null: none)'),
});

const DemandHour = z.object({
  hour: z.string().describe('UTC hour, YYYY-MM-DDTHH'),
  live: z.number().int().describe('pages the live lane asked for (submitted)'),
  scheduled: z.number().int().describe('pages the monitors asked for (past hours) or plan to (coming hours)'),
  bulk: z.number().int().describe('pages the bulk lane asked for (submitted)'),
  planned: z.boolean().describe('a coming hour: the monitors planned runs only'),
});

const Capacity = z.object({
  pages_per_minute: z.number().nullable().describe('what the fleet can crawl now (null: no crawl reported yet)'),
  basis: z.enum(['paced', 'measured', 'none']).describe("paced: the routes' paces; measured: the busiest minute"),
  routes: z.number().int().describe('the routes of `routes`: reported in the last hour, of the running fleet'),
  cooling: z.number().int().describe('routes resting after a block now'),
  live_peak_pages_per_hour: z.number().int().describe("the live lane's busiest hour of the last day"),
});

const ServiceView = z.object({
  hours: z.array(HourOutcomes).describe('the last 24 UTC hours, oldest first'),
  cache_hit_rate: z.number().nullable().describe('answered from cache / submitted over those hours; null: none'),
  queue: z
    .object({ pending: z.number().int(), in_flight: z.number().int(), oldest_pending_ms: z.number().optional() })
    .nullable()
    .describe(
      'the work queue between the fair scheduler and the crawlers: the few jobs released to it (pending) and those a crawler holds (in_flight); the backlog waits in the scheduler, so `jobs` and `lanes` count it. null when the queue cannot be read',
    ),
  jobs: JobsOpen.describe(
    'jobs not yet ended, the lanes summed (the Queue depth card): the same read as `lanes`, so they always agree',
  ),
  projection_lag: z.number().nullable().describe('log positions the read models are behind'),
  routes: z
    .array(RouteHealth)
    .describe(
      'every route a crawl reported in the last hour that the running fleet has (configured in this process, or reported since it started), as it stood at its last report (docs/fleet.md#capacity-against-demand)',
    ),
  webhook_outbox: Outbox,
  lanes: z.array(LaneView).describe('jobs not yet ended per lane, every lane (docs/fleet.md#lanes-and-fair-share)'),
  capacity: Capacity,
  demand: z
    .array(DemandHour)
    .describe(
      'pages asked per hour, the last 24 hours then the monitors’ next 24 (docs/fleet.md#capacity-against-demand)',
    ),
  now: z.string(),
});

const Tier = z.object({ name: z.string(), monthly_quota: z.number().int(), rate_limit_per_min: z.number().int() });

/** the webhook outbox as the service view shows it: what waits, what is due, what retries, what is being sent */
const outboxOf = (pending: OutboxDoc[], now: number): z.infer<typeof Outbox> => {
  const byType: Record<string, number> = {};
  let due = 0;
  let retrying = 0;
  let sending = 0;
  let oldest: string | null = null;
  for (const d of pending) {
    byType[d.eventType] = (byType[d.eventType] ?? 0) + 1;
    if (d.leaseUntil !== undefined && d.leaseUntil > now) sending++;
    else if (d.due <= now) due++;
    // an attempt moves `due` past the time it was scheduled; a retry asked for by hand makes it due now
    if (d.due > Date.parse(d.scheduledAt) && d.due > now) retrying++;
    if (oldest === null || d.scheduledAt < oldest) oldest = d.scheduledAt;
  }
  return { pending: pending.length, due, retrying, sending, oldest_scheduled_at: oldest, by_type: byType };
};

/** the jobs not yet ended, per lane and summed, from one read (queueView.ts) */
const jobsView = (queries: ReadModelQueries) => {
  const q = queueView(queries);
  return {
    jobs: { waiting: q.waiting, crawling: q.crawling, oldest_waiting_since: q.oldestWaitingSince ?? null },
    lanes: q.lanes.map(
      (l): z.infer<typeof LaneView> => ({
        lane: l.lane,
        waiting: l.waiting,
        waiting_pages: l.waitingPages,
        crawling: l.crawling,
        top_keys: l.topKeys.map((k) => ({
          key_id: k.keyId,
          ...(k.prefix ? { prefix: k.prefix } : {}),
          ...(k.label ? { label: k.label } : {}),
          waiting: k.waiting,
          waiting_pages: k.waitingPages,
          crawling: k.crawling,
        })),
      }),
    ),
  };
};

const demandView = (queries: ReadModelQueries, at: Date, spreadMaxMs: number, fleet: AdminOptions['fleet']) => {
  const { hours, capacity, livePeak } = demandAgainstCapacity(queries, at, spreadMaxMs, fleet);
  return {
    capacity: {
      pages_per_minute: capacity.pagesPerMinute === null ? null : Math.round(capacity.pagesPerMinute * 10) / 10,
      basis: capacity.basis,
      routes: capacity.routes,
      cooling: capacity.cooling,
      live_peak_pages_per_hour: livePeak,
    },
    demand: hours,
  };
};

/** What the dashboard reads beside the key api: a key's 30 days and recent jobs, the service's last 24 hours. */
export const dashboardRoutes: FastifyPluginAsync<AdminOptions> = async (app, opts) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const admin = { tags: ['admin'], security: [{ adminToken: [] }] };
  const known = (keyId: string) => {
    const doc = opts.queries.keys.byId(keyId);
    if (!doc) throw new ApiError(404, 'SERP_KEY_NOT_FOUND', `no key with id ${keyId}`);
    return doc;
  };
  const now = () => opts.now?.() ?? new Date();

  r.get('/tiers', {
    schema: {
      ...admin,
      operationId: 'listTiers',
      summary: 'The tiers a key can be minted in, with their default limits',
      response: { 200: z.object({ tiers: z.array(Tier) }), 401: ErrorBody },
    },
    handler: async () => ({
      tiers: Object.entries(opts.tiers).map(([name, t]) => ({
        name,
        monthly_quota: t.monthlyQuota,
        rate_limit_per_min: t.rateLimitPerMin,
      })),
    }),
  });

  r.get('/keys/:key_id/usage', {
    schema: {
      ...admin,
      operationId: 'getKeyDailyUsage',
      summary: "A key's searches per UTC day over the last 30 days",
      params: z.object({ key_id: z.string().max(64) }),
      response: { 200: z.object({ key_id: z.string(), days: z.array(DayUsage) }), 401: ErrorBody, 404: ErrorBody },
    },
    handler: async (req) => {
      const key = known(req.params.key_id);
      const days = opts.queries.dashboard.keyDays(key.keyId, 30, now());
      return {
        key_id: key.keyId,
        days: days.map(({ day, searches, cached, reserved, released }) => ({
          day,
          searches,
          cached,
          reserved,
          released,
        })),
      };
    },
  });

  r.get('/keys/:key_id/jobs', {
    schema: {
      ...admin,
      operationId: 'listKeyJobs',
      summary: "A key's most recent jobs, newest first, with status and failure kind",
      params: z.object({ key_id: z.string().max(64) }),
      querystring: z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) }),
      response: { 200: z.object({ key_id: z.string(), jobs: z.array(RecentJob) }), 401: ErrorBody, 404: ErrorBody },
    },
    handler: async (req) => {
      const key = known(req.params.key_id);
      const jobs = opts.queries.jobs.recentOfKey(key.keyId, req.query.limit).map((j) => ({
        job_id: j.jobId,
        keyword: j.request.keyword,
        status: j.status,
        cached: j.cached,
        ...(j.status === 'failed' ? { failure_kind: j.failure?.kind ?? j.failure?.code ?? 'unknown' } : {}),
        attempts: j.attempts,
        ...(j.pagesFetched !== undefined ? { pages: j.pagesFetched } : {}),
        submitted_at: j.submittedAt,
        ...(terminalStatuses.has(j.status) && j.completedAt ? { completed_at: j.completedAt } : {}),
      }));
      return { key_id: key.keyId, jobs };
    },
  });

  r.get('/service', {
    schema: {
      ...admin,
      operationId: 'getServiceView',
      summary:
        'Jobs per hour by outcome (24 h), cache hit rate, queue depth and lanes, projection lag, route health, webhook outbox, demand against capacity',
      response: { 200: ServiceView, 401: ErrorBody },
    },
    handler: async () => {
      const at = now();
      const hours = opts.queries.dashboard.hours(24, at);
      const standings = opts.queries.routePlacements.standings();
      const placesOf = (route: string) =>
        standings
          .filter((p) => p.route === route)
          .map(({ country, level, honour, judged, avoided }) => ({ country, level, honour, judged, avoided }));
      const submitted = hours.reduce((n, h) => n + h.submitted, 0);
      const cached = hours.reduce((n, h) => n + h.cached, 0);
      const snap = (await opts.snapshot?.().catch(() => undefined)) ?? {};
      return {
        hours,
        cache_hit_rate: submitted === 0 ? null : cached / submitted,
        queue: snap.queue
          ? {
              pending: snap.queue.pending,
              in_flight: snap.queue.inFlight,
              ...(snap.queue.oldestPendingMs !== undefined ? { oldest_pending_ms: snap.queue.oldestPendingMs } : {}),
            }
          : null,
        projection_lag: snap.projectionLag ?? null,
        routes: currentRoutes(opts.queries.dashboard.routes(at), opts.fleet).map((r) => ({
          route: r.route,
          ...(r.proxy ? { proxy: r.proxy } : {}),
          rate_rpm: r.rpm ?? null,
          requests_last_hour: r.requests,
          blocks_last_hour: r.blocked,
          placed_last_hour: r.placed,
          misplaced_last_hour: r.misplaced,
          places_elsewhere: placesElsewhere(r),
          places: placesOf(r.route),
          cooling_until: r.coolUntil && r.coolUntil > at.toISOString() ? r.coolUntil : null,
          reported_at: r.reportedAt,
        })),
        webhook_outbox: outboxOf(opts.queries.webhooks.outbox(), at.getTime()),
        ...jobsView(opts.queries),
        ...demandView(opts.queries, at, opts.monitorSpreadMaxMs, opts.fleet),
        now: at.toISOString(),
      };
    },
  });
};
