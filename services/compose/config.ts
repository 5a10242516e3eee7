import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';
import type { ServerTimeouts } from '../api/server.js';

/** A tier's limits: quota and rate (DESIGN.md §4), and rank tracking's (docs/rank-tracking.md). */
export interface TierLimits {
  monthlyQuota: number;
  rateLimitPerMin: number;
  /** monitors a key of this tier may have (default: the free tier's) */
  monitors?: number;
  /** keywords one monitor may hold */
  keywordsPerMonitor?: number;
}

/** Tier defaults; SERP_TIERS (JSON) overrides or adds tiers. */
export const defaultTiers: Record<string, TierLimits> = {
  free: { monthlyQuota: 250, rateLimitPerMin: 10, monitors: 2, keywordsPerMonitor: 10 },
  starter: { monthlyQuota: 5000, rateLimitPerMin: 60, monitors: 10, keywordsPerMonitor: 200 },
  pro: { monthlyQuota: 50000, rateLimitPerMin: 300, monitors: 50, keywordsPerMonitor: 2000 },
  enterprise: { monthlyQuota: 0, rateLimitPerMin: 1200, monitors: 500, keywordsPerMonitor: 10_000 },
};

const Tiers = z.record(
  z.string(),
  z.object({
    monthlyQuota: z.number().int().nonnegative(),
    rateLimitPerMin: z.number().int().positive(),
    monitors: z.number().int().nonnegative().optional(),
    keywordsPerMonitor: z.number().int().positive().max(10_000).optional(),
  }),
);

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  googleOrigin?: string;
  cacheTtlS: number;
  syncTimeoutMs: number;
  presignTtlS: number;
  retentionDays: number;
  /**
   * worker threads that parse fetched pages (0: on the event loop). Default: one per core, or one fewer with the crawl
   * thread or the pipeline thread, which takes a core's share itself (test/bench/pipeline.ts at concurrency 32: 382 MB peak RSS with one
   * parse thread on two cores, 428–440 MB with two)
   */
  parseThreads: number;
  /**
   * SERP_CRAWL_THREAD=1: crawls run on a thread of their own, and the projector on the event loop that answers HTTP
   * (default 0). It turns the pipeline thread's default off.
   */
  crawlThread: boolean;
  /**
   * SERP_PIPELINE_THREAD (default 1, or 0 with SERP_CRAWL_THREAD=1): the write side (projector, dispatcher, queue, crawl
   * worker, retention) runs on a thread of its own, and the event loop that answers HTTP only answers it
   * (pipelineThread.ts). 0 puts it back on the event loop: more crawl throughput when parsing is the bottleneck (two
   * parse threads on two cores), reads that wait behind it while crawls run.
   */
  pipelineThread: boolean;
  /**
   * SERP_HEAP_GROWING_PERCENT: how far V8 lets a serving process's heap grow past what its last full GC kept (0: V8's
   * own). Default 50, or 0 with the pipeline thread.
   */
  heapGrowingPercent: number;
  /** minutes between retention sweeps in a serving process (0: never; `serp-api retention sweep` by hand) */
  retentionSweepMin: number;
  tiers: Record<string, TierLimits>;
  /** SERP_MONITOR_TICK_MS: how often the monitor scheduler looks for due runs and due searches (default 1,000) */
  monitorTickMs: number;
  /** SERP_MONITOR_SPREAD_MAX_S: a scheduled run's searches are spread over its slot, at most this long (default 3,600) */
  monitorSpreadMaxS: number;
  /** SERP_WEBHOOK_BACKOFF_MS: a failed delivery's first retry delay, doubling up to an hour (default 5,000) */
  webhookBackoffMs: number;
  /** SERP_WEBHOOK_TIMEOUT_MS: one delivery attempt, connection to answer (default 10,000) */
  webhookTimeoutMs: number;
  /** SERP_WEBHOOK_CONCURRENCY: delivery attempts in flight per worker (default 64) */
  webhookConcurrency: number;
  /** SERP_WEBHOOK_ALLOW_HTTP=1: plain http webhook URLs are accepted (default: https only) */
  webhookAllowHttp: boolean;
  /** SERP_WEBHOOK_ALLOW_PRIVATE=1: webhook hosts may resolve to non-public addresses (tests, on-premises) */
  webhookAllowPrivate: boolean;
  keyPepper?: string;
  adminToken?: string;
  linkSecret?: string;
  crawlerConcurrency: number;
  /** SERP_PAGES_IN_FLIGHT: result pages of one job fetched at once after page 1 (default 5; 1 = one by one) */
  pagesInFlight: number;
  /** SERP_STOP_DOMAIN_PAGES_IN_FLIGHT: the same for a job with stop_domain (default 2) */
  stopDomainPagesInFlight: number;
  /** SERP_ROUTE_MAX_IN_FLIGHT: requests at once per proxy (or the direct route) over all jobs (default: concurrency) */
  routeMaxInFlight: number;
  fetcher: 'http' | 'browser' | 'auto';
  proxyUrls: string[];
  publicBaseUrl?: string;
  logLevel: string;
  /** SERP_CHROMIUM_PATH (default: /usr/bin/chromium, else chromium or google-chrome on PATH) */
  chromiumPath?: string;
  /** SERP_REQUEST_TIMEOUT_MS, SERP_HEADERS_TIMEOUT_MS, SERP_KEEP_ALIVE_TIMEOUT_MS */
  timeouts: ServerTimeouts;
  /** SERP_AUTH_FAILURES_PER_MIN: bad or missing keys one client IP may send a minute before 429 (default 30) */
  authFailuresPerMin: number;
}

const int = (v: string | undefined, fallback: number, name: string) => {
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${v}"`);
  return n;
};

/** The only place that reads process.env (STYLE.md); flags from the CLI win over the environment. */
export const loadConfig = (
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Pick<Config, 'port' | 'dataDir' | 'host'>> = {},
): Config => {
  const fetcher = env.SERP_FETCHER ?? 'auto';
  if (fetcher !== 'http' && fetcher !== 'browser' && fetcher !== 'auto') {
    throw new Error(`SERP_FETCHER must be http, browser or auto, got "${fetcher}"`);
  }
  const tiers = { ...defaultTiers, ...(env.SERP_TIERS ? Tiers.parse(JSON.parse(env.SERP_TIERS)) : {}) };
  const crawlerConcurrency = int(env.SERP_CRAWLER_CONCURRENCY, 8, 'SERP_CRAWLER_CONCURRENCY') || 1;
  const crawlThread = int(env.SERP_CRAWL_THREAD, 0, 'SERP_CRAWL_THREAD') > 0;
  // the pipeline thread is the default; the crawl thread is the other layout (the projector on the event loop), so
  // asking for it turns the default off, and asking for both is a mistake to name, not a nesting to guess at
  const pipelineThread = int(env.SERP_PIPELINE_THREAD, crawlThread ? 0 : 1, 'SERP_PIPELINE_THREAD') > 0;
  if (crawlThread && pipelineThread) {
    throw new Error(
      'SERP_CRAWL_THREAD=1 and SERP_PIPELINE_THREAD=1 are two layouts of the write side: the pipeline thread already crawls off the event loop; set one of them',
    );
  }
  return {
    port: overrides.port ?? int(env.SERP_PORT, 8080, 'SERP_PORT'),
    host: overrides.host ?? env.SERP_HOST ?? '127.0.0.1',
    dataDir: resolve(overrides.dataDir ?? env.SERP_DATA_DIR ?? '.data'),
    googleOrigin: env.SERP_GOOGLE_ORIGIN || undefined,
    cacheTtlS: int(env.SERP_CACHE_TTL_S, 3600, 'SERP_CACHE_TTL_S'),
    syncTimeoutMs: int(env.SERP_SYNC_TIMEOUT_MS, 55_000, 'SERP_SYNC_TIMEOUT_MS'),
    presignTtlS: int(env.SERP_PRESIGN_TTL_S, 3600, 'SERP_PRESIGN_TTL_S'),
    retentionDays: int(env.SERP_RETENTION_DAYS, 31, 'SERP_RETENTION_DAYS'),
    parseThreads: int(
      env.SERP_PARSE_THREADS,
      crawlThread || pipelineThread ? Math.max(1, availableParallelism() - 1) : availableParallelism(),
      'SERP_PARSE_THREADS',
    ),
    crawlThread,
    pipelineThread,
    // with the pipeline thread the event loop's heap holds no results: V8's own factor lets it collect rarely (its
    // full collections were the longest pauses a read waited out), and the threads that do hold results have
    // ceilings of their own, from which V8 derives theirs
    heapGrowingPercent: int(env.SERP_HEAP_GROWING_PERCENT, pipelineThread ? 0 : 50, 'SERP_HEAP_GROWING_PERCENT'),
    retentionSweepMin: int(env.SERP_RETENTION_SWEEP_MIN, 60, 'SERP_RETENTION_SWEEP_MIN'),
    tiers,
    keyPepper: env.SERP_KEY_PEPPER || undefined,
    adminToken: env.SERP_ADMIN_TOKEN || undefined,
    linkSecret: env.SERP_LINK_SECRET || undefined,
    crawlerConcurrency,
    pagesInFlight: int(env.SERP_PAGES_IN_FLIGHT, 5, 'SERP_PAGES_IN_FLIGHT') || 1,
    stopDomainPagesInFlight: int(env.SERP_STOP_DOMAIN_PAGES_IN_FLIGHT, 2, 'SERP_STOP_DOMAIN_PAGES_IN_FLIGHT') || 1,
    // as many requests per IP as there are jobs at once: parallel pages fill idle slots, never a bigger burst
    routeMaxInFlight: int(env.SERP_ROUTE_MAX_IN_FLIGHT, 0, 'SERP_ROUTE_MAX_IN_FLIGHT') || crawlerConcurrency,
    fetcher,
    proxyUrls: (env.SERP_PROXY_URLS ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    publicBaseUrl: env.SERP_PUBLIC_BASE_URL || undefined,
    logLevel: env.SERP_LOG_LEVEL ?? 'info',
    chromiumPath: env.SERP_CHROMIUM_PATH || undefined,
    timeouts: {
      requestTimeoutMs: int(env.SERP_REQUEST_TIMEOUT_MS, 30_000, 'SERP_REQUEST_TIMEOUT_MS') || 30_000,
      headersTimeoutMs: int(env.SERP_HEADERS_TIMEOUT_MS, 10_000, 'SERP_HEADERS_TIMEOUT_MS') || 10_000,
      keepAliveTimeoutMs: int(env.SERP_KEEP_ALIVE_TIMEOUT_MS, 5_000, 'SERP_KEEP_ALIVE_TIMEOUT_MS') || 5_000,
    },
    authFailuresPerMin: int(env.SERP_AUTH_FAILURES_PER_MIN, 30, 'SERP_AUTH_FAILURES_PER_MIN') || 30,
    monitorTickMs: int(env.SERP_MONITOR_TICK_MS, 1000, 'SERP_MONITOR_TICK_MS') || 1000,
    monitorSpreadMaxS: int(env.SERP_MONITOR_SPREAD_MAX_S, 3600, 'SERP_MONITOR_SPREAD_MAX_S'),
    webhookBackoffMs: int(env.SERP_WEBHOOK_BACKOFF_MS, 5000, 'SERP_WEBHOOK_BACKOFF_MS') || 5000,
    webhookTimeoutMs: int(env.SERP_WEBHOOK_TIMEOUT_MS, 10_000, 'SERP_WEBHOOK_TIMEOUT_MS') || 10_000,
    webhookConcurrency: int(env.SERP_WEBHOOK_CONCURRENCY, 64, 'SERP_WEBHOOK_CONCURRENCY') || 64,
    webhookAllowHttp: int(env.SERP_WEBHOOK_ALLOW_HTTP, 0, 'SERP_WEBHOOK_ALLOW_HTTP') > 0,
    webhookAllowPrivate: int(env.SERP_WEBHOOK_ALLOW_PRIVATE, 0, 'SERP_WEBHOOK_ALLOW_PRIVATE') > 0,
  };
};
