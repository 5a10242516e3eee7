import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { CrawlCost, LocationCheck } from '../../contracts/events.js';
import type { Lane } from '../../contracts/lanes.js';
import { misplacedOn } from '../../domain/location/placement.js';
import { laneOf } from '../../domain/searchJob/searchJob.js';
import type { RoutePlaceStanding } from '../../projections/routePlacements/queries.js';
import type { EventStore } from '../ports/eventStore.js';
import type { QueueStats } from '../ports/jobQueue.js';
import { createReactor, type Handled, type HeadReactorDeps, type Reactor } from '../reactor/reactor.js';
import { threadRestarts } from '../threads/threadFaults.js';

/**
 * The service's Prometheus metrics (prom-client), one registry per process (never the global one, so that tests may
 * build several apps in one process).
 *
 * - HTTP: requests and latency by route pattern, method and status (an onResponse hook in the app).
 * - From the event log, observed by a subscription from the head at start: submits, cache answers, crawl outcomes
 *   (done, partial, failed by kind), pages fetched and crawl time. In distributed mode every api process sees the
 *   whole cluster's events, so these count the cluster's work since that process started.
 * - The crawls' cost (docs/fleet.md), from the same events: Google requests by fetcher, bytes, requests per
 *   successful search, requests and blocks per route, and each route's pace and cooldown as its last crawl reported.
 * - Where Google placed the searches (docs/locations.md#the-check): every page judged, by route and verdict, and the
 *   searches served `partial` because Google placed them elsewhere even after a retry, by the route that ended them.
 * - Gauges read when scraped: queue depth and the oldest wait (its own queue, or JetStream's for a distributed api),
 *   and projection lag (global positions between the log's head and this process's read models).
 * - Thread restarts (docs/architecture.md#when-a-thread-fails), by the kind of thread, read when scraped.
 * - Lanes (docs/fleet.md#lanes-and-fair-share): jobs waiting and crawling per lane (the `queue` read model, when
 *   scraped), and each job's wait from submit to its first Google request per lane (a histogram, from the log).
 */
export interface Metrics {
  registry: Registry;
  /** what /metrics answers: this registry, then the write side's background workers' metrics when given */
  text(): Promise<string>;
  observeHttp(route: string, method: string, status: number, seconds: number): void;
  /** queue depth and projection lag now, where this process can see them (the admin dashboard's service view) */
  snapshot(): Promise<{ queue?: QueueStats; projectionLag?: number }>;
  /** starts following the event log from its head (its reactor, `logFollower`); stop() ends it */
  follow(eventStore: EventStore): Promise<void>;
  /** the reactor that counts the log's events into this registry (`metrics`, from the log's head) */
  logFollower(deps: HeadReactorDeps): Reactor;
  stop(): Promise<void>;
}

export interface MetricsSources {
  queueStats?: () => Promise<QueueStats>;
  /** the newest global position and the one the read models include */
  projection?: () => Promise<{ head: number; projected: number }>;
  /** rank tracking (docs/rank-tracking.md): live monitors and those with a slot due now, from the read models */
  monitors?: () => { monitors: number; due: number };
  /**
   * the background workers' metrics (services/compose/backgroundWorkers.ts), in Prometheus's text format: asked at
   * each scrape, from this thread's write side or the pipeline thread's
   */
  writeSide?: () => Promise<string>;
  /** jobs not yet ended per lane, waiting for the fair scheduler or crawling (the queue read model) */
  lanes?: () => Record<Lane, { waiting: number; crawling: number }>;
  /** each route's record of honouring the places it served (the routePlacements read model) */
  routePlaces?: () => RoutePlaceStanding[];
  /** default process metrics (CPU, memory, event loop lag); off in tests that build many apps */
  processMetrics?: boolean;
}

/** the events the metrics count */
const OBSERVED = [
  'SearchSubmitted',
  'SearchAnsweredFromCache',
  'CrawlStarted',
  'CrawlCompleted',
  'CrawlFailed',
  'MonitorRunCompleted',
  'MonitorKeywordChecked',
] as const;

export const createMetrics = (sources: MetricsSources = {}): Metrics => {
  const registry = new Registry();
  if (sources.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'serp_' });
  const http = new Counter({
    name: 'serp_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'serp_http_request_duration_seconds',
    help: 'HTTP answer time by route pattern and method',
    labelNames: ['route', 'method'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const submits = new Counter({
    name: 'serp_submits_total',
    help: 'Searches submitted (SearchSubmitted), by whether they were charged',
    labelNames: ['charged'] as const,
    registers: [registry],
  });
  const cacheHits = new Counter({
    name: 'serp_cache_hits_total',
    help: 'Searches answered from the result cache (SearchAnsweredFromCache)',
    registers: [registry],
  });
  const crawls = new Counter({
    name: 'serp_crawls_total',
    help: 'Crawl outcomes: done, partial, or failed (final failures) by kind',
    labelNames: ['outcome', 'kind'] as const,
    registers: [registry],
  });
  const attempts = new Counter({
    name: 'serp_crawl_attempt_failures_total',
    help: 'Crawl attempts that failed (retried or final), by failure kind',
    labelNames: ['kind', 'final'] as const,
    registers: [registry],
  });
  const pages = new Counter({
    name: 'serp_pages_fetched_total',
    help: 'Google result pages fetched by finished crawls, by HTTP status class',
    labelNames: ['status'] as const,
    registers: [registry],
  });
  const crawlTime = new Histogram({
    name: 'serp_crawl_duration_seconds',
    help: 'From CrawlStarted to CrawlCompleted of one attempt: fetching and parsing every page of a job',
    buckets: [0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120],
    registers: [registry],
  });
  const runsSkipped = new Counter({
    name: 'serp_monitor_runs_skipped_total',
    help: 'Monitor runs that ended with keywords skipped, by the reason (quota_exhausted, key_revoked, …)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const historyPoints = new Counter({
    name: 'serp_history_points_written_total',
    help: 'Rank-history points recorded (one per keyword × domain × search), by status',
    labelNames: ['status'] as const,
    registers: [registry],
  });
  if (sources.monitors) {
    const monitors = sources.monitors;
    new Gauge({
      name: 'serp_monitors',
      help: 'Monitors (state=active: scheduled, state=due: a slot due and not started yet)',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const m = monitors();
        this.set({ state: 'active' }, m.monitors);
        this.set({ state: 'due' }, m.due);
      },
    });
  }
  if (sources.lanes) {
    const lanes = sources.lanes;
    new Gauge({
      name: 'serp_lane_jobs',
      help: 'Jobs not yet ended per lane: waiting in the fair scheduler or on the work queue (state=waiting), or crawling',
      labelNames: ['lane', 'state'] as const,
      registers: [registry],
      collect() {
        for (const [lane, n] of Object.entries(lanes())) {
          this.set({ lane, state: 'waiting' }, n.waiting);
          this.set({ lane, state: 'crawling' }, n.crawling);
        }
      },
    });
  }
  // a thread that failed and was started again (docs/architecture.md#when-a-thread-fails): counted where it happened,
  // this thread's own and those the pipeline thread reported here, whichever registry scrapes them
  const restartsSeen: Record<string, number> = {};
  new Counter({
    name: 'serp_thread_restarts_total',
    help: 'Threads that failed and were started again, by kind: parse, pipeline, writer (event store), hash',
    labelNames: ['thread'] as const,
    registers: [registry],
    collect() {
      for (const [thread, n] of Object.entries(threadRestarts())) {
        this.inc({ thread }, n - (restartsSeen[thread] ?? 0));
        restartsSeen[thread] = n;
      }
    },
  });
  const laneWait = new Histogram({
    name: 'serp_lane_wait_seconds',
    help: "A crawled job's wait per lane, from submit to its first Google request (search_metadata.queued_ms)",
    labelNames: ['lane'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600],
    registers: [registry],
  });
  /** submit time and lane of the jobs not ended yet, to time their wait when they end (bounded) */
  const submitted = new Map<string, { at: number; lane: Lane }>();
  const waited = (jobId: string, firstRequestAt: string | undefined) => {
    const s = submitted.get(jobId);
    submitted.delete(jobId);
    if (!s || !firstRequestAt) return;
    laneWait.observe({ lane: s.lane }, Math.max(0, Date.parse(firstRequestAt) - s.at) / 1000);
  };
  const googleRequests = new Counter({
    name: 'serp_google_requests_total',
    help: 'Google requests made by crawls (retries, redirects, challenge reloads, session openings), by fetcher',
    labelNames: ['fetcher'] as const,
    registers: [registry],
  });
  const googleBytes = new Counter({
    name: 'serp_google_bytes_total',
    help: 'Bytes the Google requests of crawls brought',
    registers: [registry],
  });
  const perSearch = new Histogram({
    name: 'serp_google_requests_per_search',
    help: 'Google requests each successful (done or partial) crawl made: sum/count is the mean',
    buckets: [1, 2, 3, 5, 10, 15, 20, 30, 50],
    registers: [registry],
  });
  const routeRequests = new Counter({
    name: 'serp_route_requests_total',
    help: 'Google requests by route (proxy-N in SERP_PROXY_URLS order, or direct)',
    labelNames: ['route'] as const,
    registers: [registry],
  });
  const routeBlocks = new Counter({
    name: 'serp_route_blocks_total',
    help: 'Google answers that were blocks (CAPTCHA, challenge, consent, 429), by route',
    labelNames: ['route'] as const,
    registers: [registry],
  });
  const routeRate = new Gauge({
    name: 'serp_route_rate_rpm',
    help: "Each route's pace, Google requests a minute, as the last crawl that used it reported (absent: pacing off)",
    labelNames: ['route'] as const,
    registers: [registry],
  });
  /** each route's cooldown end as last reported, for the gauge read at scrape time */
  const coolUntil = new Map<string, number>();
  new Gauge({
    name: 'serp_route_cooldown_seconds',
    help: 'Seconds each route still rests after a block (0: in use), as the last crawl that used it reported',
    labelNames: ['route'] as const,
    registers: [registry],
    collect() {
      const t = Date.now();
      for (const [route, until] of coolUntil) this.set({ route }, Math.max(0, (until - t) / 1000));
    },
  });
  const placements = new Counter({
    name: 'serp_location_checks_total',
    help: 'Result pages judged against the place asked for, by route and verdict (matched, mismatched, region_only, country_only, unverified); retries included',
    labelNames: ['route', 'status'] as const,
    registers: [registry],
  });
  const misplaced = new Counter({
    name: 'serp_location_mismatched_searches_total',
    help: 'Searches served partial because Google placed them elsewhere even after a retry on another route, by the route of the page that ended them',
    labelNames: ['route'] as const,
    registers: [registry],
  });
  const observePlacements = (check: LocationCheck | undefined) => {
    if (!check) return;
    for (const p of check.placements) placements.inc({ route: p.route, status: p.status });
    const route = misplacedOn(check);
    if (route) misplaced.inc({ route });
  };
  const observeCost = (cost: CrawlCost | undefined, succeeded: boolean) => {
    if (!cost) return;
    googleRequests.inc({ fetcher: 'browser' }, cost.browserPages);
    googleRequests.inc({ fetcher: 'http' }, cost.requests - cost.browserPages);
    googleBytes.inc(cost.bytes);
    if (succeeded) perSearch.observe(cost.requests);
    for (const r of cost.routes) {
      routeRequests.inc({ route: r.route }, r.requests);
      routeBlocks.inc({ route: r.route }, r.blocked);
      if (r.rpm !== undefined) routeRate.set({ route: r.route }, r.rpm);
      coolUntil.set(r.route, r.coolUntil ? Date.parse(r.coolUntil) : 0);
    }
  };
  if (sources.queueStats) {
    const stats = sources.queueStats;
    new Gauge({
      name: 'serp_queue_depth',
      help: 'Jobs waiting for a crawler (state=pending) or out with one (state=in_flight)',
      labelNames: ['state'] as const,
      registers: [registry],
      async collect() {
        // a queue that cannot answer leaves the last values: a scrape never fails for it
        const s = await stats().catch(() => undefined);
        if (!s) return;
        this.set({ state: 'pending' }, s.pending);
        this.set({ state: 'in_flight' }, s.inFlight);
      },
    });
    new Gauge({
      name: 'serp_queue_oldest_pending_seconds',
      help: 'How long the oldest waiting job has waited (0 when none waits)',
      registers: [registry],
      async collect() {
        const s = await stats().catch(() => undefined);
        if (s) this.set((s.oldestPendingMs ?? 0) / 1000);
      },
    });
  }
  if (sources.routePlaces) {
    const standings = sources.routePlaces;
    // beside serp_location_checks_total: what the checks taught the dispatcher (docs/locations.md#how-routes-are-chosen)
    new Gauge({
      name: 'serp_route_place_honour_ratio',
      help: "Each route's chance of honouring a place's searches, by the place's country and level (country, region, city), from its recent pages there",
      labelNames: ['route', 'country', 'level'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const s of standings()) this.set({ route: s.route, country: s.country, level: s.level }, s.honour);
      },
    });
    new Gauge({
      name: 'serp_route_place_avoided',
      help: "1 where a route is set aside for a place's located searches (it kept placing them elsewhere; tried again one search in 20), else 0",
      labelNames: ['route', 'country', 'level'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const s of standings())
          this.set({ route: s.route, country: s.country, level: s.level }, s.avoided ? 1 : 0);
      },
    });
  }
  if (sources.projection) {
    const projection = sources.projection;
    new Gauge({
      name: 'serp_projection_lag_positions',
      help: "Global positions between the event log's head and this process's read models (0: caught up)",
      registers: [registry],
      async collect() {
        const p = await projection().catch(() => undefined);
        if (p) this.set(Math.max(0, p.head - p.projected));
      },
    });
  }

  /** CrawlStarted times of attempts in flight, to time them when they complete (bounded) */
  const started = new Map<string, number>();
  const observe = (events: Handled<(typeof OBSERVED)[number]>[]) => {
    for (const e of events) {
      switch (e.type) {
        case 'SearchSubmitted':
          submits.inc({ charged: String(e.data.charged) });
          if (e.data.charged) {
            submitted.set(e.data.jobId, { at: Date.parse(e.data.submittedAt), lane: laneOf(e.data) });
            if (submitted.size > 100_000) submitted.delete(submitted.keys().next().value as string);
          }
          break;
        case 'SearchAnsweredFromCache':
          cacheHits.inc();
          break;
        case 'CrawlStarted':
          started.set(e.data.jobId, Date.parse(e.data.startedAt));
          if (started.size > 10_000) started.delete(started.keys().next().value as string);
          break;
        case 'CrawlCompleted': {
          crawls.inc({ outcome: e.data.status, kind: '' });
          observeCost(e.data.cost, true);
          waited(e.data.jobId, e.data.firstRequestAt);
          observePlacements(e.data.locationCheck);
          for (const p of e.data.pages) pages.inc({ status: `${Math.floor(p.status / 100)}xx` });
          const t0 = started.get(e.data.jobId);
          if (t0 !== undefined) crawlTime.observe(Math.max(0, Date.parse(e.data.completedAt) - t0) / 1000);
          started.delete(e.data.jobId);
          break;
        }
        case 'MonitorRunCompleted':
          if (e.data.skipReason) runsSkipped.inc({ reason: e.data.skipReason });
          break;
        case 'MonitorKeywordChecked':
          for (const r of e.data.ranks) {
            historyPoints.inc({ status: !e.data.ok ? 'failed' : r.position ? 'ranked' : 'not_ranked' });
          }
          break;
        case 'CrawlFailed': {
          const kind = e.data.failure?.kind ?? e.data.failure?.code ?? 'unknown';
          attempts.inc({ kind, final: String(e.data.final) });
          observeCost(e.data.cost, false);
          if (e.data.final) {
            crawls.inc({ outcome: 'failed', kind });
            waited(e.data.jobId, e.data.firstRequestAt);
          }
          started.delete(e.data.jobId);
          break;
        }
      }
    }
  };

  /** the log's counters, followed from its head at start (counts since this process started) */
  const logFollower = (deps: HeadReactorDeps): Reactor =>
    createReactor({ name: 'metrics', handles: OBSERVED, handle: observe }, deps);
  let follower: Reactor | undefined;
  return {
    registry,
    async text() {
      const own = await registry.metrics();
      // a write side that cannot answer (a thread that just ended) leaves its lines out: a scrape never fails for it
      const theirs = (await sources.writeSide?.().catch(() => '')) ?? '';
      return theirs ? `${own.trimEnd()}\n${theirs}` : own;
    },
    async snapshot() {
      const [queue, projection] = await Promise.all([
        sources.queueStats?.().catch(() => undefined),
        sources.projection?.().catch(() => undefined),
      ]);
      return {
        ...(queue ? { queue } : {}),
        ...(projection ? { projectionLag: Math.max(0, projection.head - projection.projected) } : {}),
      };
    },
    observeHttp(route, method, status, seconds) {
      http.inc({ route, method, status: String(status) });
      latency.observe({ route, method }, seconds);
    },
    logFollower,
    async follow(eventStore) {
      follower = logFollower({ eventStore });
      await follower.start();
    },
    async stop() {
      await follower?.stop();
      follower = undefined;
    },
  };
};
