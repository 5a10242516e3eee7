import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { processEnv } from './env.js';
import { parseEnvironment, type TierLimits } from './schema.js';

export { ConfigError, defaultTiers, MIN_SECRET_LENGTH, type TierLimits } from './schema.js';

/** A tier's share against other keys in a lane (SERP_TIERS `share`, default 1; docs/fleet.md#lanes-and-fair-share). */
export const tierShare =
  (tiers: Record<string, TierLimits>) =>
  (tier: string): number =>
    tiers[tier]?.share ?? 1;

/** What `serp-api serve` runs with (every mode), and what the CLI's commands on a data directory read. */
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
   * worker threads that parse fetched pages (0: on the event loop). Default: one per core, or one fewer with the
   * pipeline thread, which takes a core's share itself (test/bench/pipeline.ts at concurrency 32: 382 MB peak RSS with one
   * parse thread on two cores, 428–440 MB with two)
   */
  parseThreads: number;
  /**
   * SERP_PIPELINE_THREAD (default 1): the write side (projector, dispatcher, queue, crawl
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
  /** SERP_WEBHOOK_CONCURRENCY: delivery attempts in flight per write side (default 64) */
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
  /**
   * SERP_ROUTE_MAX_RPM: the most Google requests a minute one route (proxy, or the direct route) is paced at, and where
   * its learned pace starts (default 20; 0: no pacing, routes used as fast as jobs come). Per crawler process.
   */
  routeMaxRpm: number;
  /** SERP_ROUTE_COOLDOWN_S: how long a route rests after a block, doubling per block in a row (default 60) */
  routeCooldownMs: number;
  /** SERP_ROUTE_COOLDOWN_MAX_S: the longest rest (default 1800) */
  routeCooldownMaxMs: number;
  /** SERP_NO_ROUTE_WAIT_S: how long a page waits while every route rests before its job fails `no_route` (default 120) */
  noRouteWaitMs: number;
  fetcher: 'http' | 'browser' | 'auto';
  proxyUrls: string[];
  publicBaseUrl?: string;
  /** SERP_INSTANCE_ID: what `GET /health` names this process (default: one made when the process started) */
  instanceId: string;
  logLevel: string;
  /** SERP_CHROMIUM_PATH (default: /usr/bin/chromium, else chromium or google-chrome on PATH) */
  chromiumPath?: string;
  /** SERP_CHROMIUM_HOST_RULES: Chromium's --host-resolver-rules (the tests keep every name but loopback unresolved) */
  chromiumHostRules?: string;
  /** SERP_REQUEST_TIMEOUT_MS, SERP_HEADERS_TIMEOUT_MS, SERP_KEEP_ALIVE_TIMEOUT_MS */
  timeouts: { requestTimeoutMs: number; headersTimeoutMs: number; keepAliveTimeoutMs: number };
  /**
   * SERP_AUTH_FAILURES_PER_MIN: bad or missing credentials (API keys, admin tokens, link signatures) one client IP may
   * send a minute before 429 (default 30)
   */
  authFailuresPerMin: number;
  /** SERP_RAW_PER_ADDRESS_PER_MIN: requests to signed raw-HTML links one client IP may send a minute (default 60) */
  rawPerAddressPerMin: number;
  /**
   * SERP_PARSE_TIMEOUT_MS: how long one page may take to parse on a parse thread before the thread is ended and
   * replaced and the page fails as `parse_timeout` (default 10,000; pages take milliseconds)
   */
  parseTimeoutMs: number;
  /** SERP_DRAIN_TIMEOUT_MS: how long a stopping crawler lets its crawls run before handing them back (default 20,000) */
  drainTimeoutMs: number;
  /** SERP_CACHE_SCOPE: `key` (default) answers a search from a cached result of the same key only; `shared`, any key's */
  cacheScope: 'key' | 'shared';
  /** SERP_FAIR_SHARE (default on): lanes and fair share between keys; off: one queue, first come first served */
  fairShare: boolean;
  /** SERP_LANE_MIN_SHARE: what every lower lane with work keeps of page capacity (default 0.1) */
  laneMinShare: number;
  /** SERP_QUEUE_AHEAD: jobs per lane the dispatcher keeps in the work queue ahead of the crawlers (default 2) */
  queueAhead: number;
}

/** this process's name when SERP_INSTANCE_ID gives none: made once, so every loadConfig of a process agrees */
const PROCESS_INSTANCE_ID = `ins_${randomBytes(6).toString('hex')}`;

/**
 * The service's settings from the environment (schema.ts: every variable, its default and what it does); flags from
 * the CLI win over the environment. Throws a ConfigError naming every wrong variable.
 */
export const loadConfig = (
  env: Readonly<Record<string, string | undefined>> = processEnv(),
  overrides: Partial<Pick<Config, 'port' | 'dataDir' | 'host'>> = {},
): Config => {
  const e = parseEnvironment(env);
  const pipelineThread = (e.SERP_PIPELINE_THREAD ?? 1) > 0;
  return {
    port: overrides.port ?? e.SERP_PORT ?? 8080,
    host: overrides.host ?? e.SERP_HOST ?? '127.0.0.1',
    dataDir: resolve(overrides.dataDir ?? e.SERP_DATA_DIR ?? '.data'),
    googleOrigin: e.SERP_GOOGLE_ORIGIN,
    cacheTtlS: e.SERP_CACHE_TTL_S ?? 3600,
    syncTimeoutMs: e.SERP_SYNC_TIMEOUT_MS ?? 55_000,
    presignTtlS: e.SERP_PRESIGN_TTL_S ?? 3600,
    retentionDays: e.SERP_RETENTION_DAYS ?? 31,
    parseThreads:
      e.SERP_PARSE_THREADS ?? (pipelineThread ? Math.max(1, availableParallelism() - 1) : availableParallelism()),
    pipelineThread,
    // with the pipeline thread the event loop's heap holds no results: V8's own factor lets it collect rarely (its
    // full collections were the longest pauses a read waited out), and the threads that do hold results have
    // ceilings of their own, from which V8 derives theirs
    heapGrowingPercent: e.SERP_HEAP_GROWING_PERCENT ?? (pipelineThread ? 0 : 50),
    retentionSweepMin: e.SERP_RETENTION_SWEEP_MIN ?? 60,
    tiers: e.SERP_TIERS,
    keyPepper: e.SERP_KEY_PEPPER,
    adminToken: e.SERP_ADMIN_TOKEN,
    linkSecret: e.SERP_LINK_SECRET,
    crawlerConcurrency: e.SERP_CRAWLER_CONCURRENCY ?? 8,
    pagesInFlight: e.SERP_PAGES_IN_FLIGHT ?? 5,
    stopDomainPagesInFlight: e.SERP_STOP_DOMAIN_PAGES_IN_FLIGHT ?? 2,
    // as many requests per IP as there are jobs at once: parallel pages fill idle slots, never a bigger burst
    routeMaxInFlight: e.SERP_ROUTE_MAX_IN_FLIGHT || (e.SERP_CRAWLER_CONCURRENCY ?? 8),
    routeMaxRpm: e.SERP_ROUTE_MAX_RPM ?? 20,
    routeCooldownMs: e.SERP_ROUTE_COOLDOWN_S,
    routeCooldownMaxMs: e.SERP_ROUTE_COOLDOWN_MAX_S,
    noRouteWaitMs: e.SERP_NO_ROUTE_WAIT_S,
    fetcher: e.SERP_FETCHER,
    proxyUrls: e.SERP_PROXY_URLS,
    publicBaseUrl: e.SERP_PUBLIC_BASE_URL,
    instanceId: e.SERP_INSTANCE_ID ?? PROCESS_INSTANCE_ID,
    logLevel: e.SERP_LOG_LEVEL,
    chromiumPath: e.SERP_CHROMIUM_PATH,
    chromiumHostRules: e.SERP_CHROMIUM_HOST_RULES,
    timeouts: {
      requestTimeoutMs: e.SERP_REQUEST_TIMEOUT_MS ?? 30_000,
      headersTimeoutMs: e.SERP_HEADERS_TIMEOUT_MS ?? 10_000,
      keepAliveTimeoutMs: e.SERP_KEEP_ALIVE_TIMEOUT_MS ?? 5_000,
    },
    authFailuresPerMin: e.SERP_AUTH_FAILURES_PER_MIN ?? 30,
    rawPerAddressPerMin: e.SERP_RAW_PER_ADDRESS_PER_MIN ?? 60,
    parseTimeoutMs: e.SERP_PARSE_TIMEOUT_MS ?? 10_000,
    drainTimeoutMs: e.SERP_DRAIN_TIMEOUT_MS ?? 20_000,
    cacheScope: e.SERP_CACHE_SCOPE,
    fairShare: (e.SERP_FAIR_SHARE ?? 1) > 0,
    laneMinShare: e.SERP_LANE_MIN_SHARE,
    queueAhead: e.SERP_QUEUE_AHEAD ?? 2,
    monitorTickMs: e.SERP_MONITOR_TICK_MS ?? 1000,
    monitorSpreadMaxS: e.SERP_MONITOR_SPREAD_MAX_S ?? 3600,
    webhookBackoffMs: e.SERP_WEBHOOK_BACKOFF_MS ?? 5000,
    webhookTimeoutMs: e.SERP_WEBHOOK_TIMEOUT_MS ?? 10_000,
    webhookConcurrency: e.SERP_WEBHOOK_CONCURRENCY ?? 64,
    webhookAllowHttp: (e.SERP_WEBHOOK_ALLOW_HTTP ?? 0) > 0,
    webhookAllowPrivate: (e.SERP_WEBHOOK_ALLOW_PRIVATE ?? 0) > 0,
  };
};
