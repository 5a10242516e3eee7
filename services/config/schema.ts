import { z } from 'zod';
import {
  bounded,
  flag,
  fraction,
  list,
  oneOf,
  seconds,
  secret,
  type TierLimits,
  text,
  tiers,
  wholeNumber,
} from './parsers.js';

export { MIN_SECRET_LENGTH, type TierLimits } from './parsers.js';

/**
 * Every `SERP_*` environment variable, in one zod schema: its parser, its default and what it does. It is the one
 * place a variable is declared: docs/configuration.md is generated from it (`npm run docs:config`, docs.ts), the
 * service's configuration is its parsed values (config.ts; a variable's field is its name in camelCase, `fieldOf`
 * below), and the other loaders (distributed.ts for `serve --role`, clients.ts for `serp-api-mcp` and the CLI's HTTP
 * commands) read the same values and add what one mode requires. env.ts is the only module that reads `process.env`.
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

/** What docs/configuration.md says of a variable beyond its default, which it reads from the parser (docs.ts). */
export interface VariableDoc {
  description: string;
  /**
   * for a variable whose parser has no default (a value derived at load, required in a mode, or made at first start):
   * what an unset one means, in words (`–`: nothing)
   */
  unsetMeans?: string;
}

/** The documentation of each variable's schema (a zod registry: the schema and its text stay one object). */
export const variableDocs = z.registry<VariableDoc>();

const variable = <T extends z.ZodType>(schema: T, description: string, unsetMeans?: string): T => {
  variableDocs.add(schema, { description, ...(unsetMeans !== undefined ? { unsetMeans } : {}) });
  return schema;
};

/**
 * Tier defaults; SERP_TIERS (JSON) overrides or adds tiers, and a tier it names without rank tracking's limits or a
 * share gets the free tier's here (a share of 1).
 */
export const defaultTiers = {
  free: { monthlyQuota: 250, rateLimitPerMin: 10, monitors: 2, keywordsPerMonitor: 10, share: 1 },
  starter: { monthlyQuota: 5000, rateLimitPerMin: 60, monitors: 10, keywordsPerMonitor: 200, share: 2 },
  pro: { monthlyQuota: 50000, rateLimitPerMin: 300, monitors: 50, keywordsPerMonitor: 2000, share: 4 },
  enterprise: { monthlyQuota: 0, rateLimitPerMin: 1200, monitors: 500, keywordsPerMonitor: 10_000, share: 8 },
} as const satisfies Readonly<Record<string, TierLimits>>;

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** `serp-api serve`, in every mode */
const service = {
  SERP_PORT: variable(wholeNumber(8080), 'Port `serve` listens on (`--port` wins; 0 takes a free one).'),
  SERP_HOST: variable(text('127.0.0.1'), 'Address `serve` binds (`--host` wins).'),
  SERP_DATA_DIR: variable(
    text('./.data'),
    'Data directory (`--data` wins). Embedded: the event log, read models, raw HTML and secrets; distributed: this process’s read models.',
  ),
  SERP_LOG_LEVEL: variable(
    oneOf(LOG_LEVELS, 'info'),
    'Level of the JSON log lines on stdout: trace, debug, info, warn, error, fatal or silent.',
  ),
  SERP_INSTANCE_ID: variable(
    text(),
    'A name for this process, answered by `GET /health` as `instance_id`: `cluster up` names each process it starts and checks that its port answers with that name, not another process’s.',
    'ins_ and 12 random hex digits, made when the process starts',
  ),
  SERP_PUBLIC_BASE_URL: variable(
    text(),
    'Origin that signed raw-HTML links (`html_url`) and `/openapi.json` name, for a service behind a proxy.',
    'the listening address',
  ),
  SERP_CACHE_TTL_S: variable(wholeNumber(3600), 'Seconds a finished search answers the same request from cache.'),
  SERP_SYNC_TIMEOUT_MS: variable(
    wholeNumber(55_000),
    'How long `async: false` waits for the result before answering 202 with the running job.',
  ),
  SERP_PRESIGN_TTL_S: variable(wholeNumber(3600), 'Seconds a signed raw-HTML link stays valid.'),
  SERP_RETENTION_DAYS: variable(
    wholeNumber(31),
    'Days jobs, results and raw HTML are kept; an older job answers 410 "job expired".',
  ),
  SERP_RETENTION_SWEEP_MIN: variable(
    wholeNumber(60),
    'Minutes between retention sweeps of the write side (0: never; `serp-api retention sweep` by hand).',
  ),
  SERP_TIERS: variable(
    tiers(defaultTiers, defaultTiers.free),
    'JSON that overrides or adds tiers: `{"free":{"monthlyQuota":250,"rateLimitPerMin":10,"monitors":2,"keywordsPerMonitor":10,"share":1},…}` (monthlyQuota 0: unlimited; `share`: the key’s weight against other keys in a lane, default 1; docs/fleet.md#lanes-and-fair-share).',
  ),
  SERP_KEY_PEPPER: variable(
    secret(),
    'Secret that API keys are hashed with. Embedded: created in the data directory when unset; distributed: required on every api process, the same everywhere. At least 16 characters in every mode.',
    'made on first start',
  ),
  SERP_ADMIN_TOKEN: variable(
    secret(),
    'Bearer token of `/admin`, `/admin/api` and `/metrics`; embedded mode prints the one it creates once. A new one ends every dashboard session. Distributed: as SERP_KEY_PEPPER.',
    'made on first start',
  ),
  SERP_LINK_SECRET: variable(
    secret(),
    'Secret that signs raw-HTML links. Embedded: created when unset; distributed: as SERP_KEY_PEPPER.',
    'made on first start',
  ),
  SERP_REQUEST_TIMEOUT_MS: variable(
    wholeNumber(30_000, { zeroMeans: 'the default' }),
    'A request’s headers and body must arrive within it, else 408 (0: the default).',
  ),
  SERP_HEADERS_TIMEOUT_MS: variable(
    wholeNumber(10_000, { zeroMeans: 'the default' }),
    'A request’s headers must arrive within it (0: the default).',
  ),
  SERP_KEEP_ALIVE_TIMEOUT_MS: variable(
    wholeNumber(5_000, { zeroMeans: 'the default' }),
    'How long an idle keep-alive connection stays open (0: the default).',
  ),
  SERP_AUTH_FAILURES_PER_MIN: variable(
    wholeNumber(30, { zeroMeans: 'the default' }),
    'Requests with a missing or wrong credential (API key, admin token, link signature) one client IP may send a minute before 429 on every route that takes one (0: the default; docs/security.md).',
  ),
  SERP_RAW_PER_ADDRESS_PER_MIN: variable(
    wholeNumber(60, { zeroMeans: 'the default' }),
    'Requests to signed raw-HTML links (`/raw/{job_id}`) one client IP may send a minute before 429; each also counts against the owning key’s read ceiling (0: the default).',
  ),
  SERP_CACHE_SCOPE: variable(
    oneOf(['key', 'shared'] as const, 'key'),
    '`key`: a search is answered from cache only by the same API key’s earlier search, so no key learns what another searched; `shared`: by any key’s (docs/security.md#the-result-cache-per-key).',
  ),
  SERP_MONITOR_TICK_MS: variable(
    wholeNumber(1000, { zeroMeans: 'the default' }),
    'How often the monitor scheduler (rank tracking, a background worker) looks for due runs and due searches (0: the default).',
  ),
  SERP_MONITOR_SPREAD_MAX_S: variable(
    wholeNumber(3600),
    'A scheduled monitor run’s searches are spread over its slot, at most this many seconds, unless the fleet’s capacity left after live searches needs longer: then up to the next slot (docs/fleet.md#capacity-against-demand).',
  ),
  SERP_WEBHOOK_BACKOFF_MS: variable(
    wholeNumber(5000, { zeroMeans: 'the default' }),
    'A failed webhook delivery’s first retry delay, doubling (with jitter) up to an hour, for 24 hours (0: the default; docs/webhooks.md).',
  ),
  SERP_WEBHOOK_TIMEOUT_MS: variable(
    wholeNumber(10_000, { zeroMeans: 'the default' }),
    'One webhook delivery attempt, connection to answer; past it the attempt fails and is retried (0: the default).',
  ),
  SERP_WEBHOOK_CONCURRENCY: variable(
    wholeNumber(64, { zeroMeans: 'the default' }),
    'Webhook delivery attempts in flight per write side (the pipeline thread, or each dispatcher process), shared fairly between keys by their tier’s share; when all are taken, a key under its share may still start one (docs/webhooks.md#fair-share) (0: the default).',
  ),
  SERP_WEBHOOK_ALLOW_HTTP: variable(
    flag(false),
    '1: plain `http` webhook URLs are accepted; 0: `https` only (a registration with `http` answers 422).',
  ),
  SERP_WEBHOOK_ALLOW_PRIVATE: variable(
    flag(false),
    '1: webhook hosts may resolve to loopback, private, link-local or other non-public addresses (tests, on-premises); 0: such an address is refused at registration (422) and at every delivery attempt (server-side request forgery).',
  ),

  SERP_FAIR_SHARE: variable(
    flag(true),
    'Lanes and fair share between keys (docs/fleet.md#lanes-and-fair-share); 0: one queue, first come first served, as before lanes existed (the baseline test/bench/fairness.ts compares against).',
  ),
  SERP_LANE_MIN_SHARE: variable(
    fraction(0.1, 1 / 3),
    'The share of page capacity every lower lane with work keeps while a higher lane has work too, so `scheduled` and `bulk` never starve behind `live` (0: strict priority; at most 1/3).',
  ),
  SERP_ROUTE_LEARNING: variable(
    flag(true),
    "Located searches keep off the routes that keep placing their place's searches elsewhere, trying each again one search in 20 (docs/locations.md#how-routes-are-chosen); 0: every route serves every search and the retry alone keeps results right (the baseline test/bench/locationTruth.ts compares against).",
  ),
  SERP_QUEUE_AHEAD: variable(
    wholeNumber(2, { zeroMeans: 'the default' }),
    'Jobs per lane the dispatcher keeps in the work queue ahead of the crawlers; the rest wait in the fair scheduler, so a job submitted later can still go first (0: the default).',
  ),
  SERP_RENDER_CONCURRENCY: variable(
    wholeNumber(2),
    'Stored pages one api process renders at once for screenshots and pixel positions, in a Chromium of their own at nice 19 (docs/screenshots.md#its-own-lane); 0 renders none (screenshots answer 503).',
  ),
  SERP_RENDER_QUEUE: variable(
    wholeNumber(16),
    'Renders that may wait for one of those slots; one more is refused with 503 and Retry-After (docs/screenshots.md#its-own-lane).',
  ),
  SERP_RENDER_DEADLINE_MS: variable(
    wholeNumber(15_000, { zeroMeans: 'the default' }),
    'How long one render may take before its page is closed and the request answered 503 (0: the default).',
  ),
  // the job queue, in-process (embedded) or JetStream (distributed): the same settings in every mode
  SERP_QUEUE_ACK_WAIT_MS: variable(
    bounded(60_000, 1_000, Number.MAX_SAFE_INTEGER, 'a number of milliseconds'),
    'A crawl silent this long is handed to another crawler (at least 1000); a crawl in flight tells the queue it is alive every quarter of it.',
  ),
  SERP_QUEUE_MAX_DELIVER: variable(bounded(5, 1, 20, 'a whole number'), 'Attempts per job, 1 to 20.'),
  SERP_QUEUE_DEDUPE_WINDOW_MS: variable(
    bounded(3_600_000, 1_000, Number.MAX_SAFE_INTEGER, 'a number of milliseconds'),
    'One job id and dispatch number is enqueued once within this window (at least 1000): longer than a job waits on the queue and its deliveries take, so a restarted or second dispatcher that sends it again adds nothing (docs/distributed.md#how-it-holds-together).',
  ),
};

/** the crawler (every crawling process or thread) */
const crawler = {
  SERP_FETCHER: variable(
    oneOf(['http', 'browser', 'auto'] as const, 'auto'),
    '`auto`: sessions opened in Chromium, later pages over plain HTTP with their cookies; `http`: plain HTTP only; `browser`: every page in Chromium. Without Chromium `auto` falls back to `http` with a warning and `browser` refuses to start.',
  ),
  SERP_GOOGLE_ORIGIN: variable(
    text(),
    'Origin the crawler fetches instead of Google (tests, mirrors); the requested domain is still validated and recorded.',
    'https://www.{engine_domain}',
  ),
  SERP_PROXY_URLS: variable(list(), 'Proxies, comma-separated; one session per proxy.'),
  SERP_CHROMIUM_PATH: variable(
    text(),
    'The Chromium the browser fetcher drives.',
    '/usr/bin/chromium, else chromium, chromium-browser, google-chrome or google-chrome-stable on PATH',
  ),
  SERP_CHROMIUM_HOST_RULES: variable(
    text(),
    "Chromium's `--host-resolver-rules` (e.g. `MAP * ~NOTFOUND, EXCLUDE 127.0.0.1`: no name resolves but loopback). The test suite sets it so a fixture page's subresources never leave the machine; a deployment can pin names.",
  ),
  SERP_CRAWLER_CONCURRENCY: variable(
    wholeNumber(8, { zeroMeans: 1 }),
    'Jobs of each lane one crawler runs at once, plus a quarter as many express slots per lane for keys with nothing else out (docs/fleet.md#lanes-and-fair-share); with SERP_FAIR_SHARE=0, jobs at once (0: 1).',
  ),
  SERP_DRAIN_TIMEOUT_MS: variable(
    wholeNumber(20_000),
    'On SIGTERM, how long the crawls in flight may run on before they are handed back to the queue unfinished (another crawler, or this one after its restart, crawls them again). Keep it under your orchestrator’s grace period.',
  ),
  SERP_PAGES_IN_FLIGHT: variable(
    wholeNumber(5, { zeroMeans: 1 }),
    'Result pages of one job fetched at once after page 1 (1: one by one).',
  ),
  SERP_STOP_DOMAIN_PAGES_IN_FLIGHT: variable(
    wholeNumber(2, { zeroMeans: 1 }),
    'The same for a job with `stop_domain`, so a rank check asks for at most one page past the one that shows the domain.',
  ),
  SERP_ROUTE_MAX_IN_FLIGHT: variable(
    wholeNumber(undefined, { zeroMeans: 'the default' }),
    'Requests in flight per proxy (or the direct route) over every job and page (0: the default).',
    'SERP_CRAWLER_CONCURRENCY',
  ),
  SERP_ROUTE_MAX_RPM: variable(
    wholeNumber(20),
    'The most Google requests a minute one route (a proxy, or the direct route) is paced at, and where its learned pace starts; 0: no pacing. Per crawler process (docs/fleet.md).',
  ),
  SERP_ROUTE_COOLDOWN_S: variable(seconds(60), 'Seconds a route rests after a block, doubling per block in a row.'),
  SERP_ROUTE_COOLDOWN_MAX_S: variable(seconds(1800), 'The longest rest of a route, in seconds.'),
  SERP_PAGE_RETRY_BACKOFF_MS: variable(
    wholeNumber(1000),
    'A result page’s wait before its next attempt after a block or a failed fetch, doubling per attempt with full jitter up to 15 s; the route’s own cooldown (SERP_ROUTE_COOLDOWN_S) applies besides. Tests shorten it; Google wants the default.',
  ),
  SERP_NO_ROUTE_WAIT_S: variable(
    seconds(120),
    'Seconds a page waits while every route rests before its search fails `no_route` (its quota released).',
  ),
  SERP_PARSE_THREADS: variable(
    wholeNumber(),
    'Worker threads that parse fetched pages (piscina); 0 parses on the thread that crawls.',
    'one per core, one fewer with the pipeline thread',
  ),
  SERP_PARSE_TIMEOUT_MS: variable(
    wholeNumber(10_000, { zeroMeans: 'the default' }),
    'How long one page may take on a parse thread before the thread is ended and replaced and the search fails as `parse_timeout`, its quota released; pages take milliseconds (0: the default). Parsing on the crawling thread (SERP_PARSE_THREADS=0) has no deadline.',
  ),
};

/**
 * SERP_CHAOS_FAULTS's entries: a thread's kind, the unit of work its fault comes at, and `:each` (the pipeline and
 * projector threads') or (the pipeline thread's only) `:disk-full` (threadFaults.ts)
 */
export const CHAOS_FAULT = /^(parse|pipeline|writer|hash|projector):([1-9]\d*)(:each|:disk-full)?$/;

/** threads and memory of an embedded `serve` */
const runtime = {
  SERP_PIPELINE_THREAD: variable(
    flag(true),
    'The write side of `serve` (projector, dispatcher, queue, crawl worker, background workers) on a thread of its own, so reads keep their latency while crawls run; 0 runs it on the event loop that answers HTTP (docs/architecture.md).',
  ),
  SERP_HEAP_GROWING_PERCENT: variable(
    wholeNumber(),
    'How far V8 lets the main heap grow past what its last full collection kept (0: V8’s own factor).',
    '0, or 50 with SERP_PIPELINE_THREAD=0',
  ),
  SERP_CHAOS_FAULTS: variable(
    list().refine(
      (entries) =>
        entries.every((e) => CHAOS_FAULT.test(e) && (!e.endsWith(':disk-full') || e.startsWith('pipeline:'))),
      {
        message:
          'a comma-separated list of kind:N, kind one of parse, pipeline, writer, hash, projector (pipeline:N:each, projector:N:each and pipeline:N:disk-full also)',
      },
    ),
    'Fault injection, for the tests only: `kind:N` kills a thread of that kind with an uncaught error at its Nth page parsed (`parse`), crawl started (`pipeline`), group committed (`writer`), job hashed (`hash`) or batch a cluster api’s projector thread projects once caught up (`projector`), to show it is restarted (docs/architecture.md#when-a-thread-fails); the pipeline and projector threads’ fault is injected into their first thread only, or into every new one with `pipeline:N:each` (`projector:N:each`); `pipeline:N:disk-full` makes that error the one a full disk raises (`ENOSPC`), which stops the process (docs/operations.md#exit-codes). Never set it in production.',
  ),
};

/** `serve --role …` (distributed.ts adds what a role requires) */
const distributed = {
  SERP_EVENTSTORE_URL: variable(
    text(),
    'The event log: `nats://host:4222[,nats://…]` (JetStream) or `kurrentdb://…` / `esdb://…` (KurrentDB, EventStoreDB).',
    'required',
  ),
  SERP_NATS_URL: variable(
    text(),
    'NATS servers (comma-separated) for the job queue, rate limits and raw HTML; required with KurrentDB.',
    'SERP_EVENTSTORE_URL when it is NATS',
  ),
  SERP_NATS_REPLICAS: variable(
    oneOf(['1', '3'] as const, '1').transform(Number),
    'Replicas of each stream, KV and object bucket this process creates: 1 or 3.',
  ),
};

/**
 * The job queue's redelivery delays after a failed attempt (a crawl that threw or was handed back), the last one
 * repeating, in every mode (the in-process queue and JetStream's consumers). Not a variable: the attempts are
 * SERP_QUEUE_MAX_DELIVER's, and a crawl's own retries of a page are paced by the crawler. Declared here, and only here.
 */
export const QUEUE_BACKOFF_MS: readonly number[] = [1_000, 5_000, 15_000];

/**
 * Where the CLI's HTTP commands look last for the service (services/cli/serviceClient.ts): after `--base-url`,
 * SERP_API_BASE_URL and the service running on the data directory. Declared here, and only here.
 */
export const DEFAULT_SERVICE_URL = 'http://127.0.0.1:8080';

/** `serp-api-mcp` and the CLI's HTTP commands (clients.ts) */
const clients = {
  SERP_API_BASE_URL: variable(
    text(),
    'The service the clients call (`--base-url` wins on the CLI).',
    `on the CLI, the service running on the data directory (\`server.json\`), else ${DEFAULT_SERVICE_URL}; required by serp-api-mcp`,
  ),
  SERP_API_KEY: variable(text(), 'The API key the clients call with (`--key` wins on the CLI).', 'required'),
  SERP_CLIENT_POLL_MS: variable(
    wholeNumber(1_500, { zeroMeans: 'the default' }),
    'How often the clients poll a job they wait for (`serp-api batch` and `search`, serp-api-mcp’s `serp_search`): every this many ms and up to a third more, jittered. Against a live search of 5–30 s the default costs at most one interval; the test suite shortens it.',
  ),
};

/** `serp-api cluster up` */
const dev = {
  SERP_NATS_SERVER: variable(
    text('nats-server'),
    'The nats-server binary (2.11 or newer; a path, or a name looked up on PATH) that `cluster up` and the tests start.',
  ),
};

/** read by the test suite and the benchmarks only */
const tests = {
  SERP_FIXTURES_DIR: variable(
    text(),
    'The folder holding the fixture pages (`serp/`, `geo/`) the fake Google origin serves.',
    '../shared/fixtures beside the checkout',
  ),
  SERP_KURRENTDB_URL: variable(
    text(),
    'A KurrentDB server the event-store conformance suite runs against (skipped without one).',
  ),
  SERP_TEST_NODE_ARGS: variable(
    text(),
    'Extra node flags for the services the tests and benchmarks start, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.',
  ),
  SERP_TEST_BUILT: variable(
    flag(false),
    'Set to 1 by the test runner once it has built dist/: the services and CLIs the tests start run the compiled code (docs/testing.md#the-build-the-tests-run).',
  ),
  SERP_NATS_LOG: variable(flag(false), 'The nats-server processes the tests start print their log on stderr.'),
};

/** Each group's variables, in the order docs/configuration.md lists them. */
export const VARIABLE_GROUPS = { service, crawler, runtime, distributed, clients, dev, tests } satisfies Record<
  Group,
  Record<string, z.ZodType>
>;

/** What `serp-api serve` runs with (config.ts): the service's, the crawler's and the threads' variables. */
export const SERVE_VARIABLES = { ...service, ...crawler, ...runtime };

export const Environment = z.object({ ...SERVE_VARIABLES, ...distributed, ...clients, ...dev, ...tests });

export type EnvironmentValues = z.output<typeof Environment>;

/** A configuration that cannot run: every problem, one line each. */
export class ConfigError extends Error {
  readonly code = 'SERP_CONFIG';
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

/** A variable's default: what its parser returns when it is unset (for a command's flag that defaults to it). */
export const defaultOf = <N extends keyof typeof Environment.shape>(name: N): z.output<(typeof Environment.shape)[N]> =>
  Environment.shape[name].parse(undefined) as z.output<(typeof Environment.shape)[N]>;

/** Every variable the schema knows, in its order. */
export const VARIABLES = Object.keys(Environment.shape) as (keyof EnvironmentValues)[];

/** The environment parsed by the schema, or a ConfigError naming every variable that is wrong and why. */
export const parseEnvironment = (env: Readonly<Record<string, string | undefined>>): EnvironmentValues => {
  const parsed = Environment.safeParse(env);
  if (parsed.success) return parsed.data;
  throw new ConfigError(parsed.error.issues.map((issue) => `${String(issue.path[0])} ${issue.message}`));
};

type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

/**
 * A variable's field in a configuration: its name without `SERP_`, in camelCase (`SERP_CACHE_TTL_S` → `cacheTtlS`),
 * holding the value in the variable's own unit. The one naming rule, so no field is declared twice.
 */
export type FieldOf<V extends string> = V extends `SERP_${infer Rest}` ? CamelCase<Lowercase<Rest>> : never;

export const fieldOf = <V extends string>(variable: V): FieldOf<V> =>
  variable
    .slice('SERP_'.length)
    .toLowerCase()
    .replace(/_(.)/g, (_, c: string) => c.toUpperCase()) as FieldOf<V>;

/** The parsed values of a group of variables (`Shape`), each under its field name. */
export type Settings<Shape extends Record<string, z.ZodType>> = {
  [V in keyof Shape & string as FieldOf<V>]: z.output<Shape[V]>;
};

/** `values`' variables of `shape`, each under its field name (the runtime side of `Settings`). */
export const settingsOf = <Shape extends Record<string, z.ZodType>>(
  shape: Shape,
  values: EnvironmentValues,
): Settings<Shape> =>
  Object.fromEntries(
    Object.keys(shape).map((name) => [fieldOf(name), values[name as keyof EnvironmentValues]]),
  ) as Settings<Shape>;
