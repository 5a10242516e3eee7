import { z } from 'zod';

/**
 * Every `SERP_*` environment variable, in one zod schema: its parser, its default and what it does
 * (docs/configuration.md is generated from this file: `npm run docs:config`). The loaders (config.ts for `serve`,
 * distributed.ts for `serve --role`, clients.ts for `serp-api-mcp` and the CLI's HTTP commands) read the parsed
 * values and add what one mode requires; env.ts is the only module that reads `process.env`.
 */
export const GROUPS = {
  service: 'The service (`serp-api serve`, every mode)',
  crawler: 'Crawling',
  runtime: 'Threads and memory (embedded `serve`)',
  distributed: 'Distributed mode (`serp-api serve --role …`)',
  clients: 'Clients (`serp-api-mcp`, `serp-api batch` and `search`)',
  dev: 'Development tooling (`serp-api cluster up`)',
  tests: 'The test suite and benchmarks (not read by the service)',
} as const;
export type Group = keyof typeof GROUPS;

/** What docs/configuration.md says of a variable. */
export interface VariableDoc {
  group: Group;
  /** the default as a reader should see it (`–`: none) */
  default: string;
  description: string;
}

/** The documentation of each variable's schema (a zod registry: the schema and its text stay one object). */
export const variableDocs = z.registry<VariableDoc>();

/** a blank value is an unset one (`SERP_X=` in a compose file) */
const unset = (v: string | undefined) => v === undefined || v.trim() === '';

/** a whole number ≥ 0 (the message the service has always given); `zeroMeans` replaces a 0 */
const wholeNumber = (fallback: number | undefined, zeroMeans?: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (unset(v)) return fallback;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0) {
        ctx.addIssue({ code: 'custom', message: `must be a non-negative integer, got "${v}"` });
        return z.NEVER;
      }
      return n === 0 && zeroMeans !== undefined ? zeroMeans : n;
    });

/** a whole number within bounds, with the message distributed mode has always given */
const bounded = (fallback: number, min: number, max: number, unit: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (unset(v)) return fallback;
      const n = Number(v);
      if (!Number.isInteger(n)) ctx.addIssue({ code: 'custom', message: `must be ${unit}` });
      else if (n < min) ctx.addIssue({ code: 'custom', message: `must be at least ${min}` });
      else if (n > max) ctx.addIssue({ code: 'custom', message: `must be at most ${max}` });
      else return n;
      return z.NEVER;
    });

const text = () =>
  z
    .string()
    .optional()
    .transform((v) => (unset(v) ? undefined : v));

const oneOf = <const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) =>
  z
    .string()
    .optional()
    .transform((v, ctx): T[number] => {
      if (unset(v)) return fallback;
      if ((values as readonly string[]).includes(v as string)) return v as T[number];
      ctx.addIssue({
        code: 'custom',
        message: `must be ${values.join(', ').replace(/, ([^,]*)$/, ' or $1')}, got "${v}"`,
      });
      return z.NEVER;
    });

/** seconds ≥ 0, decimals allowed, as milliseconds */
const seconds = (fallbackS: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (unset(v)) return fallbackS * 1000;
      const n = Number(v);
      if (!Number.isFinite(n) || n < 0) {
        ctx.addIssue({ code: 'custom', message: `must be a non-negative number of seconds, got "${v}"` });
        return z.NEVER;
      }
      return Math.round(n * 1000);
    });

/** a fraction within [0, max] */
const fraction = (fallback: number, max: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (unset(v)) return fallback;
      const n = Number(v);
      if (!Number.isFinite(n) || n < 0 || n > max) {
        ctx.addIssue({
          code: 'custom',
          message: `must be a number from 0 to ${Math.floor(max * 1000) / 1000}, got "${v}"`,
        });
        return z.NEVER;
      }
      return n;
    });

const list = () =>
  z
    .string()
    .optional()
    .transform((v) =>
      (v ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    );

/** A tier's limits: quota and rate, and rank tracking's (docs/rank-tracking.md). */
export interface TierLimits {
  monthlyQuota: number;
  rateLimitPerMin: number;
  /** monitors a key of this tier may have (default: the free tier's) */
  monitors?: number;
  /** keywords one monitor may hold */
  keywordsPerMonitor?: number;
  /**
   * a key's share of the fleet against other keys in the same lane (docs/fleet.md#lanes-and-fair-share): a key of
   * share 4 is served four pages for each page of a key of share 1 while both wait (default: 1)
   */
  share?: number;
}

/** Tier defaults; SERP_TIERS (JSON) overrides or adds tiers. */
export const defaultTiers: Record<string, TierLimits> = {
  free: { monthlyQuota: 250, rateLimitPerMin: 10, monitors: 2, keywordsPerMonitor: 10, share: 1 },
  starter: { monthlyQuota: 5000, rateLimitPerMin: 60, monitors: 10, keywordsPerMonitor: 200, share: 2 },
  pro: { monthlyQuota: 50000, rateLimitPerMin: 300, monitors: 50, keywordsPerMonitor: 2000, share: 4 },
  enterprise: { monthlyQuota: 0, rateLimitPerMin: 1200, monitors: 500, keywordsPerMonitor: 10_000, share: 8 },
};

const Tiers = z.record(
  z.string(),
  z.object({
    monthlyQuota: z.number().int().nonnegative(),
    rateLimitPerMin: z.number().int().positive(),
    monitors: z.number().int().nonnegative().optional(),
    keywordsPerMonitor: z.number().int().positive().max(10_000).optional(),
    share: z.number().positive().max(1000).optional(),
  }),
);

const tiers = () =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (unset(v)) return { ...defaultTiers };
      let json: unknown;
      try {
        json = JSON.parse(v as string);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON: {"name":{"monthlyQuota":N,"rateLimitPerMin":N},…}' });
        return z.NEVER;
      }
      const parsed = Tiers.safeParse(json);
      if (!parsed.success) {
        ctx.addIssue({
          code: 'custom',
          message:
            'must map tier names to {"monthlyQuota": N ≥ 0, "rateLimitPerMin": N ≥ 1, "monitors"?: N ≥ 0, "keywordsPerMonitor"?: 1–10000, "share"?: 0 < N ≤ 1000}',
        });
        return z.NEVER;
      }
      return { ...defaultTiers, ...parsed.data } as Record<string, TierLimits>;
    });

/** Every secret a deployment sets is at least this long in every mode (the generated ones are 43; docs/security.md). */
export const MIN_SECRET_LENGTH = 16;

const secret = () =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (unset(v)) return undefined;
      if ((v as string).length >= MIN_SECRET_LENGTH) return v as string;
      ctx.addIssue({ code: 'custom', message: `must be at least ${MIN_SECRET_LENGTH} characters` });
      return z.NEVER;
    });

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

const doc = <T extends z.ZodType>(schema: T, group: Group, fallback: string, description: string): T => {
  variableDocs.add(schema, { group, default: fallback, description });
  return schema;
};

export const Environment = z.object({
  SERP_PORT: doc(wholeNumber(8080), 'service', '8080', 'Port `serve` listens on (`--port` wins; 0 takes a free one).'),
  SERP_HOST: doc(text(), 'service', '127.0.0.1', 'Address `serve` binds (`--host` wins).'),
  SERP_DATA_DIR: doc(
    text(),
    'service',
    './.data',
    'Data directory (`--data` wins). Embedded: the event log, read models, raw HTML and secrets; distributed: this process’s read models.',
  ),
  SERP_LOG_LEVEL: doc(
    oneOf(LOG_LEVELS, 'info'),
    'service',
    'info',
    'Level of the JSON log lines on stdout: trace, debug, info, warn, error, fatal or silent.',
  ),
  SERP_INSTANCE_ID: doc(
    text(),
    'service',
    'ins_ and 12 random hex digits, made at start',
    'A name for this process, answered by `GET /health` as `instance_id`: `cluster up` names each process it starts and checks that its port answers with that name, not another process’s.',
  ),
  SERP_PUBLIC_BASE_URL: doc(
    text(),
    'service',
    'the listening address',
    'Origin that signed raw-HTML links (`html_url`) and `/openapi.json` name, for a service behind a proxy.',
  ),
  SERP_CACHE_TTL_S: doc(
    wholeNumber(3600),
    'service',
    '3600',
    'Seconds a finished search answers the same request from cache.',
  ),
  SERP_SYNC_TIMEOUT_MS: doc(
    wholeNumber(55_000),
    'service',
    '55000',
    'How long `async: false` waits for the result before answering 202 with the running job.',
  ),
  SERP_PRESIGN_TTL_S: doc(wholeNumber(3600), 'service', '3600', 'Seconds a signed raw-HTML link stays valid.'),
  SERP_RETENTION_DAYS: doc(
    wholeNumber(31),
    'service',
    '31',
    'Days jobs, results and raw HTML are kept; an older job answers 410 "job expired".',
  ),
  SERP_RETENTION_SWEEP_MIN: doc(
    wholeNumber(60),
    'service',
    '60',
    'Minutes between retention sweeps of the write side (0: never; `serp-api retention sweep` by hand).',
  ),
  SERP_TIERS: doc(
    tiers(),
    'service',
    'free, starter, pro, enterprise',
    'JSON that overrides or adds tiers: `{"free":{"monthlyQuota":250,"rateLimitPerMin":10,"monitors":2,"keywordsPerMonitor":10,"share":1},…}` (monthlyQuota 0: unlimited; `share`: the key’s weight against other keys in a lane, default 1; docs/fleet.md#lanes-and-fair-share).',
  ),
  SERP_KEY_PEPPER: doc(
    secret(),
    'service',
    'made on first start',
    'Secret that API keys are hashed with. Embedded: created in the data directory when unset; distributed: required on every api process, the same everywhere. At least 16 characters in every mode.',
  ),
  SERP_ADMIN_TOKEN: doc(
    secret(),
    'service',
    'made on first start',
    'Bearer token of `/admin`, `/admin/api` and `/metrics`; embedded mode prints the one it creates once. A new one ends every dashboard session. Distributed: as SERP_KEY_PEPPER.',
  ),
  SERP_LINK_SECRET: doc(
    secret(),
    'service',
    'made on first start',
    'Secret that signs raw-HTML links. Embedded: created when unset; distributed: as SERP_KEY_PEPPER.',
  ),
  SERP_REQUEST_TIMEOUT_MS: doc(
    wholeNumber(30_000, 30_000),
    'service',
    '30000',
    'A request’s headers and body must arrive within it, else 408 (0: the default).',
  ),
  SERP_HEADERS_TIMEOUT_MS: doc(
    wholeNumber(10_000, 10_000),
    'service',
    '10000',
    'A request’s headers must arrive within it (0: the default).',
  ),
  SERP_KEEP_ALIVE_TIMEOUT_MS: doc(
    wholeNumber(5_000, 5_000),
    'service',
    '5000',
    'How long an idle keep-alive connection stays open (0: the default).',
  ),
  SERP_AUTH_FAILURES_PER_MIN: doc(
    wholeNumber(30, 30),
    'service',
    '30',
    'Requests with a missing or wrong credential (API key, admin token, link signature) one client IP may send a minute before 429 on every route that takes one (0: the default; docs/security.md).',
  ),
  SERP_RAW_PER_ADDRESS_PER_MIN: doc(
    wholeNumber(60, 60),
    'service',
    '60',
    'Requests to signed raw-HTML links (`/raw/{job_id}`) one client IP may send a minute before 429; each also counts against the owning key’s read ceiling (0: the default).',
  ),
  SERP_CACHE_SCOPE: doc(
    oneOf(['key', 'shared'] as const, 'key'),
    'service',
    'key',
    '`key`: a search is answered from cache only by the same API key’s earlier search, so no key learns what another searched; `shared`: by any key’s (docs/security.md#the-result-cache-per-key).',
  ),

  SERP_MONITOR_TICK_MS: doc(
    wholeNumber(1000, 1000),
    'service',
    '1000',
    'How often the monitor scheduler (rank tracking, a background worker) looks for due runs and due searches (0: the default).',
  ),
  SERP_MONITOR_SPREAD_MAX_S: doc(
    wholeNumber(3600),
    'service',
    '3600',
    'A scheduled monitor run’s searches are spread over its slot, at most this many seconds.',
  ),

  SERP_WEBHOOK_BACKOFF_MS: doc(
    wholeNumber(5000, 5000),
    'service',
    '5000',
    'A failed webhook delivery’s first retry delay, doubling (with jitter) up to an hour, for 24 hours (0: the default; docs/webhooks.md).',
  ),
  SERP_WEBHOOK_TIMEOUT_MS: doc(
    wholeNumber(10_000, 10_000),
    'service',
    '10000',
    'One webhook delivery attempt, connection to answer; past it the attempt fails and is retried (0: the default).',
  ),
  SERP_WEBHOOK_CONCURRENCY: doc(
    wholeNumber(64, 64),
    'service',
    '64',
    'Webhook delivery attempts in flight per write side (the pipeline thread, or each dispatcher process), shared fairly between keys by their tier’s share; when all are taken, a key under its share may still start one (docs/webhooks.md#fair-share) (0: the default).',
  ),
  SERP_WEBHOOK_ALLOW_HTTP: doc(
    wholeNumber(0),
    'service',
    '0',
    '1: plain `http` webhook URLs are accepted; 0: `https` only (a registration with `http` answers 422).',
  ),
  SERP_WEBHOOK_ALLOW_PRIVATE: doc(
    wholeNumber(0),
    'service',
    '0',
    '1: webhook hosts may resolve to loopback, private, link-local or other non-public addresses (tests, on-premises); 0: such an address is refused at registration (422) and at every delivery attempt (server-side request forgery).',
  ),

  SERP_FAIR_SHARE: doc(
    wholeNumber(1),
    'service',
    '1',
    'Lanes and fair share between keys (docs/fleet.md#lanes-and-fair-share); 0: one queue, first come first served, as before lanes existed (the baseline test/bench/fairness.ts compares against).',
  ),
  SERP_LANE_MIN_SHARE: doc(
    fraction(0.1, 1 / 3),
    'service',
    '0.1',
    'The share of page capacity every lower lane with work keeps while a higher lane has work too, so `scheduled` and `bulk` never starve behind `live` (0: strict priority; at most 1/3).',
  ),
  SERP_QUEUE_AHEAD: doc(
    wholeNumber(2, 2),
    'service',
    '2',
    'Jobs per lane the dispatcher keeps in the work queue ahead of the crawlers; the rest wait in the fair scheduler, so a job submitted later can still go first (0: the default).',
  ),

  SERP_FETCHER: doc(
    oneOf(['http', 'browser', 'auto'] as const, 'auto'),
    'crawler',
    'auto',
    '`auto`: sessions opened in Chromium, later pages over plain HTTP with their cookies; `http`: plain HTTP only; `browser`: every page in Chromium. Without Chromium `auto` falls back to `http` with a warning and `browser` refuses to start.',
  ),
  SERP_GOOGLE_ORIGIN: doc(
    text(),
    'crawler',
    'https://www.{engine_domain}',
    'Origin the crawler fetches instead of Google (tests, mirrors); the requested domain is still validated and recorded.',
  ),
  SERP_PROXY_URLS: doc(list(), 'crawler', '–', 'Proxies, comma-separated; one session per proxy.'),
  SERP_CHROMIUM_PATH: doc(
    text(),
    'crawler',
    '/usr/bin/chromium, else chromium or google-chrome on PATH',
    'The Chromium the browser fetcher drives.',
  ),
  SERP_CHROMIUM_HOST_RULES: doc(
    text(),
    'crawler',
    '–',
    "Chromium's `--host-resolver-rules` (e.g. `MAP * ~NOTFOUND, EXCLUDE 127.0.0.1`: no name resolves but loopback). The test suite sets it so a fixture page's subresources never leave the machine; a deployment can pin names.",
  ),
  SERP_CRAWLER_CONCURRENCY: doc(wholeNumber(8, 1), 'crawler', '8', 'Jobs one crawler runs at once (0: 1).'),
  SERP_DRAIN_TIMEOUT_MS: doc(
    wholeNumber(20_000),
    'crawler',
    '20000',
    'On SIGTERM, how long the crawls in flight may run on before they are handed back to the queue unfinished (another crawler, or this one after its restart, crawls them again). Keep it under your orchestrator’s grace period.',
  ),
  SERP_PAGES_IN_FLIGHT: doc(
    wholeNumber(5, 1),
    'crawler',
    '5',
    'Result pages of one job fetched at once after page 1 (1: one by one).',
  ),
  SERP_STOP_DOMAIN_PAGES_IN_FLIGHT: doc(
    wholeNumber(2, 1),
    'crawler',
    '2',
    'The same for a job with `stop_domain`, so a rank check asks for at most one page past the one that shows the domain.',
  ),
  SERP_ROUTE_MAX_IN_FLIGHT: doc(
    wholeNumber(undefined),
    'crawler',
    'SERP_CRAWLER_CONCURRENCY',
    'Requests in flight per proxy (or the direct route) over every job and page (0: the default).',
  ),
  SERP_ROUTE_MAX_RPM: doc(
    wholeNumber(20),
    'crawler',
    '20',
    'The most Google requests a minute one route (a proxy, or the direct route) is paced at, and where its learned pace starts; 0: no pacing. Per crawler process (docs/fleet.md).',
  ),
  SERP_ROUTE_COOLDOWN_S: doc(
    seconds(60),
    'crawler',
    '60',
    'Seconds a route rests after a block, doubling per block in a row.',
  ),
  SERP_ROUTE_COOLDOWN_MAX_S: doc(seconds(1800), 'crawler', '1800', 'The longest rest of a route, in seconds.'),
  SERP_NO_ROUTE_WAIT_S: doc(
    seconds(120),
    'crawler',
    '120',
    'Seconds a page waits while every route rests before its search fails `no_route` (its quota released).',
  ),
  SERP_PARSE_THREADS: doc(
    wholeNumber(undefined),
    'crawler',
    'one per core, one fewer with the pipeline thread',
    'Worker threads that parse fetched pages (piscina); 0 parses on the thread that crawls.',
  ),
  SERP_PARSE_TIMEOUT_MS: doc(
    wholeNumber(10_000, 10_000),
    'crawler',
    '10000',
    'How long one page may take on a parse thread before the thread is ended and replaced and the search fails as `parse_timeout`, its quota released; pages take milliseconds (0: the default). Parsing on the crawling thread (SERP_PARSE_THREADS=0) has no deadline.',
  ),

  SERP_PIPELINE_THREAD: doc(
    wholeNumber(1),
    'runtime',
    '1',
    'The write side of `serve` (projector, dispatcher, queue, crawl worker, background workers) on a thread of its own, so reads keep their latency while crawls run; 0 runs it on the event loop that answers HTTP (docs/architecture.md).',
  ),
  SERP_HEAP_GROWING_PERCENT: doc(
    wholeNumber(undefined),
    'runtime',
    '0, or 50 with SERP_PIPELINE_THREAD=0',
    'How far V8 lets the main heap grow past what its last full collection kept (0: V8’s own factor).',
  ),

  SERP_EVENTSTORE_URL: doc(
    text(),
    'distributed',
    'required',
    'The event log: `nats://host:4222[,nats://…]` (JetStream) or `kurrentdb://…` / `esdb://…` (KurrentDB, EventStoreDB).',
  ),
  SERP_NATS_URL: doc(
    text(),
    'distributed',
    'SERP_EVENTSTORE_URL when it is NATS',
    'NATS servers (comma-separated) for the job queue, rate limits and raw HTML; required with KurrentDB.',
  ),
  SERP_NATS_REPLICAS: doc(
    oneOf(['1', '3'] as const, '1'),
    'distributed',
    '1',
    'Replicas of each stream, KV and object bucket this process creates: 1 or 3.',
  ),
  SERP_QUEUE_ACK_WAIT_MS: doc(
    bounded(60_000, 1_000, Number.MAX_SAFE_INTEGER, 'a number of milliseconds'),
    'distributed',
    '60000',
    'A crawl silent this long is handed to another crawler (at least 1000).',
  ),
  SERP_QUEUE_MAX_DELIVER: doc(bounded(5, 1, 20, 'a whole number'), 'distributed', '5', 'Attempts per job, 1 to 20.'),
  SERP_QUEUE_DEDUPE_WINDOW_MS: doc(
    bounded(3_600_000, 1_000, Number.MAX_SAFE_INTEGER, 'a number of milliseconds'),
    'distributed',
    '3600000',
    'One job id and dispatch number is enqueued once within this window (at least 1000).',
  ),

  SERP_API_BASE_URL: doc(
    text(),
    'clients',
    'http://127.0.0.1:8080 for the CLI; required by serp-api-mcp',
    'The service the clients call (`--base-url` wins on the CLI).',
  ),
  SERP_API_KEY: doc(text(), 'clients', 'required', 'The API key the clients call with (`--key` wins on the CLI).'),

  SERP_NATS_SERVER: doc(
    text(),
    'dev',
    'nats-server on PATH',
    'The nats-server binary (2.11 or newer) that `cluster up` and the tests start.',
  ),

  SERP_FIXTURES_DIR: doc(
    text(),
    'tests',
    '../shared/fixtures beside the checkout',
    'The folder holding the fixture pages (`serp/`, `geo/`) the fake Google origin serves.',
  ),
  SERP_KURRENTDB_URL: doc(
    text(),
    'tests',
    '–',
    'A KurrentDB server the event-store conformance suite runs against (skipped without one).',
  ),
  SERP_TEST_NODE_ARGS: doc(
    text(),
    'tests',
    '–',
    'Extra node flags for the services the tests and benchmarks start, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.',
  ),
});

export type EnvironmentValues = z.output<typeof Environment>;

/** A configuration that cannot run: every problem, one line each. */
export class ConfigError extends Error {
  readonly code = 'SERP_CONFIG';
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

/** Every variable the schema knows, in its order. */
export const VARIABLES = Object.keys(Environment.shape) as (keyof EnvironmentValues)[];

/** The environment parsed by the schema, or a ConfigError naming every variable that is wrong and why. */
export const parseEnvironment = (env: Readonly<Record<string, string | undefined>>): EnvironmentValues => {
  const parsed = Environment.safeParse(env);
  if (parsed.success) return parsed.data;
  throw new ConfigError(parsed.error.issues.map((issue) => `${String(issue.path[0])} ${issue.message}`));
};
