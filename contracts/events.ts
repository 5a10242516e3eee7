import { z } from 'zod';
import { Lane } from './lanes.js';
import { MonitorAlertRaised } from './monitorAlerts.js';
import { DetectedLocation, ParsedSerp } from './result.js';
import { SearchRequest } from './search.js';
import {
  WebhookAttemptClaimed,
  WebhookChanged,
  WebhookCreated,
  WebhookDeleted,
  WebhookDelivered,
  WebhookDeliveryAttempted,
  WebhookDeliveryGivenUp,
  WebhookDeliveryRetryRequested,
  WebhookDeliveryScheduled,
  WebhookReplayRequested,
  WebhookReplayScheduled,
  WebhookSecretRotated,
} from './webhookEvents.js';

/** Event names are contracts: never renamed, only added (docs/design.md#streams-and-events). Dates are ISO strings. */
const iso = z.string();

export const Tier = z.string().min(1);

export const ApiKeyIssued = z.object({
  type: z.literal('ApiKeyIssued'),
  data: z.object({
    keyId: z.string(),
    keyHash: z.string(),
    prefix: z.string(),
    tier: Tier,
    monthlyQuota: z.number().int().nonnegative(),
    rateLimitPerMin: z.number().int().positive(),
    label: z.string().optional(),
    issuedAt: iso,
  }),
});
export const ApiKeyRevoked = z.object({
  type: z.literal('ApiKeyRevoked'),
  data: z.object({ keyId: z.string(), revokedAt: iso }),
});
export const ApiKeyLimitsChanged = z.object({
  type: z.literal('ApiKeyLimitsChanged'),
  data: z.object({
    keyId: z.string(),
    tier: Tier.optional(),
    monthlyQuota: z.number().int().nonnegative().optional(),
    rateLimitPerMin: z.number().int().positive().optional(),
    changedAt: iso,
  }),
});

export const QuotaReserved = z.object({
  type: z.literal('QuotaReserved'),
  data: z.object({ keyId: z.string(), month: z.string(), jobId: z.string(), reservedAt: iso }),
});
export const QuotaReleased = z.object({
  type: z.literal('QuotaReleased'),
  data: z.object({ keyId: z.string(), month: z.string(), jobId: z.string(), reason: z.string(), releasedAt: iso }),
});

export const RawHtmlRef = z.object({ key: z.string(), sha256: z.string(), bytes: z.number().int().nonnegative() });
export type RawHtmlRef = z.infer<typeof RawHtmlRef>;

export const PageFetched = z.object({
  start: z.number().int().nonnegative(),
  url: z.string(),
  status: z.number().int(),
  fetchedAt: iso,
  organicCount: z.number().int().nonnegative(),
  fetcher: z.string(),
});
export type PageFetched = z.infer<typeof PageFetched>;

/**
 * The targeting a crawl used (docs/decisions.md#searches-and-the-cache): the geotarget's canonical name when a
 * `location` was resolved, the gl / hl / uule sent to Google (explicit request values or the location's), the Google
 * domain asked (also when SERP_GOOGLE_ORIGIN replaced the origin) and the device impersonated.
 */
export const TargetingUsed = z.object({
  location: z.string().optional(),
  gl: z.string().optional(),
  hl: z.string().optional(),
  uule: z.string().optional(),
  googleDomain: z.string(),
  device: z.string(),
});
export type TargetingUsed = z.infer<typeof TargetingUsed>;

/**
 * How Google's stated place compares with the place asked for (docs/locations.md#the-check): the same place or one
 * inside it, elsewhere, only its region or only its country, or not known (the page does not say, or the request or
 * the page names no place the geotargets know).
 */
export const LocationStatus = z.enum(['matched', 'mismatched', 'region_only', 'country_only', 'unverified']);
export type LocationStatus = z.infer<typeof LocationStatus>;

/** One page as Google placed it on one route: a search's pages and their retries each have one. */
export const Placement = z.object({
  /** `proxy-N` or `direct`: the route the page came through */
  route: z.string(),
  /** the page's Google offset */
  start: z.number().int().nonnegative(),
  status: LocationStatus,
  /** the place the page named, as written (absent when it named none) */
  detected: z.string().optional(),
});
export type Placement = z.infer<typeof Placement>;

/**
 * The crawl's location check (docs/locations.md#the-check): the verdict on the pages it kept, what was asked and what
 * Google said, and every page judged on the way (a page placed wrong, then fetched again on another route, is two).
 */
export const LocationCheck = z.object({
  status: LocationStatus,
  /** the geotarget asked for (a location's, or a uule's name read back); absent when the request named no place */
  requested: z.string().optional(),
  /** Google's line on the page the verdict is about */
  detected: DetectedLocation.optional(),
  /** the geotarget that line was read as, when it was */
  detectedPlace: z.string().optional(),
  /** why it is unverified, or where Google placed it instead: one sentence */
  reason: z.string().optional(),
  /** pages fetched again on another route because Google placed them elsewhere */
  retries: z.number().int().nonnegative(),
  placements: z.array(Placement),
});
export type LocationCheck = z.infer<typeof LocationCheck>;

/**
 * A route's share of one crawl's cost, and how the route stood when the crawl ended (docs/fleet.md): the route is
 * `proxy-N` (its place in SERP_PROXY_URLS) or `direct`, the proxy its host:port (never its credentials).
 */
export const RouteCost = z.object({
  route: z.string(),
  proxy: z.string().optional(),
  requests: z.number().int().nonnegative(),
  blocked: z.number().int().nonnegative(),
  /** the pace it was allowed, requests a minute (absent with pacing off) */
  rpm: z.number().nonnegative().optional(),
  /** cooling down until then after a block */
  coolUntil: iso.optional(),
});
export type RouteCost = z.infer<typeof RouteCost>;

/**
 * What one crawl cost in Google requests: every request (redirects followed, a challenge's reload, a session's
 * visit to the home page), those answered with a block, those the browser made (the rest went over plain HTTP),
 * and the bytes they brought.
 */
export const CrawlCost = z.object({
  requests: z.number().int().nonnegative(),
  blocked: z.number().int().nonnegative(),
  browserPages: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  routes: z.array(RouteCost),
});
export type CrawlCost = z.infer<typeof CrawlCost>;

/**
 * What a request's `location` (or lat/lon) resolved to when it was submitted (docs/locations.md): the geotarget's
 * canonical name, and the gl, hl and uule it means. A crawl uses it as is instead of resolving the location again.
 */
export const TargetingResolved = z.object({
  location: z.string().optional(),
  gl: z.string().optional(),
  hl: z.string().optional(),
  uule: z.string().optional(),
});
export type TargetingResolved = z.infer<typeof TargetingResolved>;

export const SearchSubmitted = z.object({
  type: z.literal('SearchSubmitted'),
  data: z.object({
    jobId: z.string(),
    keyId: z.string(),
    request: SearchRequest,
    cacheKey: z.string(),
    /** true when a quota reservation backs this job (false for cache answers and unlimited keys are still true) */
    charged: z.boolean(),
    /** the usage month the reservation was taken in, so a release goes to the same stream */
    month: z.string(),
    submittedAt: iso,
    /** added later: the monitor run this job searches one keyword of (docs/rank-tracking.md) */
    monitor: z.object({ monitorId: z.string(), runId: z.string() }).optional(),
    /**
     * added later: the lane it waits in (docs/fleet.md#lanes-and-fair-share); absent before lanes: `scheduled` for a
     * monitor's job, else `live`
     */
    lane: Lane.optional(),
    /** added later: its key's share against other keys in the lane, its tier's at submit (absent: 1) */
    weight: z.number().positive().optional(),
    /** added later: its location as resolved at submit (absent: resolved by the crawl, as before) */
    targeting: TargetingResolved.optional(),
  }),
});
export const SearchAnsweredFromCache = z.object({
  type: z.literal('SearchAnsweredFromCache'),
  data: z.object({ jobId: z.string(), sourceJobId: z.string(), answeredAt: iso }),
});
export const CrawlStarted = z.object({
  type: z.literal('CrawlStarted'),
  data: z.object({ jobId: z.string(), attempt: z.number().int().positive(), worker: z.string(), startedAt: iso }),
});
export const CrawlCompleted = z.object({
  type: z.literal('CrawlCompleted'),
  data: z.object({
    jobId: z.string(),
    status: z.enum(['done', 'partial']),
    pages: z.array(PageFetched),
    /** inline in events recorded before results moved to the blob store (a start-up migration moves them out) */
    result: ParsedSerp.optional(),
    /** the parsed result as JSON in the blob store: deletable at retention, unlike the event */
    resultRef: RawHtmlRef.optional(),
    rawHtmlRef: RawHtmlRef,
    parserVersion: z.string(),
    cacheKey: z.string(),
    blocks: z.number().int().nonnegative(),
    /** added later: events recorded before it have none */
    targeting: TargetingUsed.optional(),
    /** the organic results the crawl was asked for (docs/depth.md); absent before depth existed: 100 */
    depth: z.number().int().positive().optional(),
    /**
     * true when the crawl ended before its depth did: Google's last page, or `stop_domain` found. Such a result is
     * what a crawl of any depth would return, so it answers deeper searches too (docs/depth.md). Absent before
     * depth existed: those crawls were all for the top 100.
     */
    exhausted: z.boolean().optional(),
    /** added later: what the crawl cost (events recorded before it have `blocks` only) */
    cost: CrawlCost.optional(),
    /** added later: when its first Google request went (the end of its wait in the queue: `queued_ms`) */
    firstRequestAt: iso.optional(),
    /**
     * added later: where Google placed the search against where it was asked to (docs/locations.md#the-check); absent
     * before the check existed. A search placed elsewhere even after its retry is `partial`.
     */
    locationCheck: LocationCheck.optional(),
    completedAt: iso,
  }),
});
/**
 * Why a crawl attempt failed, for machines (the public `detail`, the dashboard's counts by kind): the error's code,
 * its kind (a block's `captcha` / `js_challenge` / `consent` / `rate_limited`; a transient `server_error` / `timeout` /
 * `network` / `error_page`; a bad request's `unknown_location` / `engine_domain` / `http_status` / `page_too_large` /
 * `parse_timeout` / `redirect` / `invalid`), the HTTP status Google answered, and for an exhausted job the attempts made.
 */
export const CrawlFailure = z.object({
  code: z.enum([
    'SERP_CRAWL_BLOCKED',
    'SERP_CRAWL_TRANSIENT',
    'SERP_CRAWL_BAD_REQUEST',
    'SERP_CRAWL_UNEXPECTED',
    'SERP_CRAWL_EXHAUSTED',
    /** added later: every route was cooling down after blocks for longer than a job waits (kind `no_route`) */
    'SERP_CRAWL_NO_ROUTE',
  ]),
  kind: z.string().optional(),
  httpStatus: z.number().int().optional(),
  attempts: z.number().int().positive().optional(),
});
export type CrawlFailure = z.infer<typeof CrawlFailure>;

export const CrawlFailed = z.object({
  type: z.literal('CrawlFailed'),
  data: z.object({
    jobId: z.string(),
    attempt: z.number().int().positive(),
    /** the raw cause, for the event history and logs (may name URLs and hosts: never served) */
    reason: z.string(),
    /** added later: events recorded before it have the reason text only */
    failure: CrawlFailure.optional(),
    /** added later: what the failed attempt cost */
    cost: CrawlCost.optional(),
    /** added later: when the attempt's first Google request went, when it made one */
    firstRequestAt: iso.optional(),
    final: z.boolean(),
    failedAt: iso,
  }),
});
export const SearchReparsed = z.object({
  type: z.literal('SearchReparsed'),
  data: z.object({
    jobId: z.string(),
    parserVersion: z.string(),
    /** inline in events recorded before results moved to the blob store */
    result: ParsedSerp.optional(),
    resultRef: RawHtmlRef.optional(),
    reparsedAt: iso,
  }),
});
/**
 * Past SERP_RETENTION_DAYS a job's raw HTML and results are deleted from the blob store and its read-model rows
 * dropped (docs/operations.md#retention). The event stays, as the audit record that the job ran and what it was
 * charged.
 */
export const SearchPurged = z.object({
  type: z.literal('SearchPurged'),
  data: z.object({
    jobId: z.string(),
    cacheKey: z.string(),
    /** the blob keys deleted (raw HTML, results) */
    blobs: z.array(z.string()),
    purgedAt: iso,
  }),
});

/** A monitor's schedule as recorded: a preset, or a five-field cron in an IANA time zone. */
const RecordedSchedule = z.union([
  z.enum(['hourly', 'daily', 'weekly']),
  z.object({ cron: z.string(), timezone: z.string() }),
]);

/** The `/v1/search` targeting a monitor searches every keyword with (defaults applied). */
export const MonitorSearch = z.object({
  location: z.string().optional(),
  uule: z.string().optional(),
  lat: z.number().optional(),
  lon: z.number().optional(),
  radius: z.number().optional(),
  device: z.enum(['desktop', 'mobile', 'tablet']),
  gl: z.string().optional(),
  hl: z.string().optional(),
  engine_domain: z.string().optional(),
});
export type MonitorSearch = z.infer<typeof MonitorSearch>;

/**
 * What a monitor raises alerts on when a run completes (docs/webhooks.md): a move of at least `min_move`, entering
 * or leaving each top N of `top`, a competitor above the own domain, another URL of a domain ranking, a feature of
 * `features` gained or lost, a search that failed.
 */
export const RecordedAlerts = z.object({
  min_move: z.number().int().optional(),
  top: z.array(z.number().int()).optional(),
  competitor_outranks: z.boolean().optional(),
  url_changed: z.boolean().optional(),
  features: z.array(z.string()).optional(),
  run_failed: z.boolean().optional(),
  /** added later: the best result of a domain went from the first screen to below it (docs/rank-tracking.md#alerts) */
  fell_below_fold: z.boolean().optional(),
});
export type RecordedAlerts = z.infer<typeof RecordedAlerts>;

/**
 * A monitor's definition, declared once: what `MonitorCreated` records (with its time), what the monitor decider is
 * given, and, picked from it, what a run searches with (`RunTargeting`). Member order is the recorded order.
 */
export const MonitorDefinition = z.object({
  monitorId: z.string(),
  keyId: z.string(),
  name: z.string(),
  keywords: z.array(z.string()),
  domains: z.array(z.string()),
  search: MonitorSearch,
  depth: z.number().int(),
  schedule: RecordedSchedule,
  ctrCurve: z.array(z.number()).optional(),
  backfill: z.boolean(),
  /** added later: what the monitor raises alerts on (docs/webhooks.md) */
  alerts: RecordedAlerts.optional(),
  /** added later: each search is rendered once and its points carry pixel positions (docs/rank-tracking.md) */
  pixelPositions: z.boolean().optional(),
});
export type MonitorDefinition = z.infer<typeof MonitorDefinition>;
/** What a run copies of its monitor: small and fixed (the keywords are referenced by the monitor's version). */
export const RunTargeting = MonitorDefinition.pick({ domains: true, search: true, depth: true, pixelPositions: true });
export type RunTargeting = z.infer<typeof RunTargeting>;

/** Rank tracking (docs/rank-tracking.md): a monitor's own stream holds its configuration and nothing per run. */
export const MonitorCreated = z.object({
  type: z.literal('MonitorCreated'),
  data: MonitorDefinition.extend({ createdAt: iso }),
});
export const MonitorChanged = z.object({
  type: z.literal('MonitorChanged'),
  data: z.object({
    monitorId: z.string(),
    name: z.string().optional(),
    keywordsAdded: z.array(z.string()).optional(),
    keywordsRemoved: z.array(z.string()).optional(),
    domainsAdded: z.array(z.string()).optional(),
    domainsRemoved: z.array(z.string()).optional(),
    schedule: RecordedSchedule.optional(),
    paused: z.boolean().optional(),
    depth: z.number().int().optional(),
    /** null: back to the default curve */
    ctrCurve: z.array(z.number()).nullable().optional(),
    /** added later; null: no alerts */
    alerts: RecordedAlerts.nullable().optional(),
    /** added later: pixel positions on (true) or off */
    pixelPositions: z.boolean().optional(),
    changedAt: iso,
  }),
});
export const MonitorDeleted = z.object({
  type: z.literal('MonitorDeleted'),
  data: z.object({ monitorId: z.string(), deletedAt: iso }),
});

/**
 * A run searches each keyword once, the i-th submitted at `startAt + i × intervalMs` (spread over the slot and paced
 * under the key's rate) as the job `jobIdOf(runId, keyword, submit time)`; a backfill run instead names the stored
 * jobs it reads (`sources`). Its own stream (`monitorRun-<runId>`): a scheduled run's id is derived from the monitor
 * and the slot, so two dispatchers that see the same slot decide one run.
 *
 * The keywords are the monitor's at `monitorVersion` (its stream's version, in their order): a run records how many
 * (`keywordCount`), never the list, so a run's event is the same size whatever the keywords. Runs recorded before
 * (and backfill runs, whose keywords are those of the stored jobs) carry `keywords` instead.
 */
export const MonitorRunStarted = z.object({
  type: z.literal('MonitorRunStarted'),
  data: z.object({
    runId: z.string(),
    monitorId: z.string(),
    keyId: z.string(),
    trigger: z.enum(['schedule', 'manual', 'backfill']),
    /** the scheduled slot (its firing time), for trigger schedule */
    slot: iso.optional(),
    /** runs recorded before `monitorVersion`, and backfill runs */
    keywords: z.array(z.string()).optional(),
    ...RunTargeting.shape,
    noCache: z.boolean(),
    startAt: iso,
    intervalMs: z.number().nonnegative(),
    /** backfill: the stored job each keyword's check reads, in the order of `keywords` (a keyword may repeat) */
    sources: z.array(z.string()).optional(),
    startedAt: iso,
    /** added later: the version of `monitor-<monitorId>` whose keywords the run searches */
    monitorVersion: z.number().int().nonnegative().optional(),
    /** added later: how many keywords that version has */
    keywordCount: z.number().int().nonnegative().optional(),
  }),
});

/** One domain in one search: its best organic position within the monitor's depth, its URL, the features citing it. */
export const DomainRank = z.object({
  domain: z.string(),
  position: z.number().int().positive().optional(),
  url: z.string().optional(),
  features: z.array(z.string()),
  /**
   * added later, for a monitor with pixel positions whose search was rendered (docs/rank-tracking.md): how far down
   * the first page the domain's best result's top lay (null: not on the first page, or not ranked), and whether it
   * showed on the first screen. Absent: not measured.
   */
  pixelsFromTop: z.number().nullable().optional(),
  aboveTheFold: z.boolean().optional(),
});
export type DomainRank = z.infer<typeof DomainRank>;

/** A keyword of a run was searched: the derived positions (they outlive the result at retention) or the failure. */
export const MonitorKeywordChecked = z.object({
  type: z.literal('MonitorKeywordChecked'),
  data: z.object({
    runId: z.string(),
    monitorId: z.string(),
    keyword: z.string(),
    jobId: z.string(),
    /** when the search's pages were fetched (a backfilled search's own crawl time) */
    checkedAt: iso,
    ok: z.boolean(),
    /** why the search failed: captcha, js_challenge, timeout, … (never a position) */
    failure: z.string().optional(),
    ranks: z.array(DomainRank),
    recordedAt: iso,
  }),
});
export const MonitorKeywordsSkipped = z.object({
  type: z.literal('MonitorKeywordsSkipped'),
  data: z.object({
    runId: z.string(),
    monitorId: z.string(),
    /** recorded before skips were counted: the keywords skipped */
    keywords: z.array(z.string()).optional(),
    /** quota_exhausted, key_revoked, monitor_deleted, monitor_paused */
    reason: z.string(),
    skippedAt: iso,
    /** added later: how many of the run's searches were skipped: those from `fromIndex` on not already checked */
    count: z.number().int().nonnegative().optional(),
    fromIndex: z.number().int().nonnegative().optional(),
  }),
});
/**
 * Every keyword of the run is checked or skipped: the per-run step the changes of that run (and alerts on them) are
 * computed after (docs/rank-tracking.md).
 */
export const MonitorRunCompleted = z.object({
  type: z.literal('MonitorRunCompleted'),
  data: z.object({
    runId: z.string(),
    monitorId: z.string(),
    keyId: z.string(),
    trigger: z.enum(['schedule', 'manual', 'backfill']),
    checked: z.number().int(),
    failed: z.number().int(),
    skipped: z.number().int(),
    /** the first skip's reason when keywords were skipped */
    skipReason: z.string().optional(),
    completedAt: iso,
  }),
});

/**
 * An operator signed in to the admin dashboard: the session is known by the SHA-256 of the random id its cookie
 * carries (the id itself is never recorded), and ends at `expiresAt` unless it is ended first (docs/security.md).
 */
export const AdminSessionStarted = z.object({
  type: z.literal('AdminSessionStarted'),
  data: z.object({ sessionHash: z.string().regex(/^[0-9a-f]{64}$/), expiresAt: iso, startedAt: iso }),
});
/** Signed out: the session's cookie is refused from now on, on every api process. */
export const AdminSessionEnded = z.object({
  type: z.literal('AdminSessionEnded'),
  data: z.object({ sessionHash: z.string().regex(/^[0-9a-f]{64}$/), endedAt: iso }),
});

/**
 * A key's limits, serialized on one stream per key (`keyLimits-<keyId>`, docs/security.md#per-key): each endpoint,
 * monitor, manual run and replay a key takes is recorded there first, decided against what the stream holds and
 * appended with its expected version, so parallel requests cannot take more than the limit (the usage stream bounds
 * the quota the same way). `baseline` is what the key had of that kind before its stream recorded any (taken from the
 * read model once, the first time). `scope` is the monitor of a manual run.
 */
const KeyLimitKind = z.enum(['webhook', 'monitor', 'manualRun', 'replay']);
export type KeyLimitKind = z.infer<typeof KeyLimitKind>;
export const KeyLimitTaken = z.object({
  type: z.literal('KeyLimitTaken'),
  data: z.object({
    keyId: z.string(),
    kind: KeyLimitKind,
    id: z.string(),
    scope: z.string().optional(),
    baseline: z.number().int().nonnegative().optional(),
    takenAt: iso,
  }),
});
/** Given back: the endpoint or monitor deleted, the manual run completed, or a take whose creation never happened. */
export const KeyLimitFreed = z.object({
  type: z.literal('KeyLimitFreed'),
  data: z.object({
    keyId: z.string(),
    kind: KeyLimitKind,
    id: z.string(),
    /** deleted, completed, abandoned (taken, and its creation never recorded) */
    reason: z.string(),
    freedAt: iso,
  }),
});

export const DomainEvent = z.discriminatedUnion('type', [
  ApiKeyIssued,
  ApiKeyRevoked,
  ApiKeyLimitsChanged,
  QuotaReserved,
  QuotaReleased,
  SearchSubmitted,
  SearchAnsweredFromCache,
  CrawlStarted,
  CrawlCompleted,
  CrawlFailed,
  SearchReparsed,
  SearchPurged,
  MonitorCreated,
  MonitorChanged,
  MonitorDeleted,
  MonitorRunStarted,
  MonitorKeywordChecked,
  MonitorKeywordsSkipped,
  MonitorRunCompleted,
  AdminSessionStarted,
  AdminSessionEnded,
  MonitorAlertRaised,
  WebhookCreated,
  WebhookChanged,
  WebhookSecretRotated,
  WebhookDeleted,
  WebhookReplayRequested,
  WebhookReplayScheduled,
  WebhookDeliveryScheduled,
  WebhookAttemptClaimed,
  WebhookDeliveryAttempted,
  WebhookDelivered,
  WebhookDeliveryGivenUp,
  WebhookDeliveryRetryRequested,
  KeyLimitTaken,
  KeyLimitFreed,
]);
export type DomainEvent = z.infer<typeof DomainEvent>;
export type EventOf<T extends DomainEvent['type']> = Extract<DomainEvent, { type: T }>;

/**
 * The replay and the entry a replayed delivery's id names (`dlv_<time>r<replay's random><entry, 4 hex>`, built by
 * domain/webhook/ids.ts): its attempts go on the replay's stream, whose first event says what the delivery is.
 */
export const replayOfDelivery = (deliveryId: string) => {
  const m = /^dlv_([0-9a-f]{12})r([0-9a-f]{12})([0-9a-f]{4})$/.exec(deliveryId);
  return m ? { replayId: `rpl_${m[1]}${m[2]}`, index: Number.parseInt(m[3] as string, 16) } : undefined;
};

export const streams = {
  apiKey: (keyId: string) => `apiKey-${keyId}`,
  usage: (keyId: string, month: string) => `usage-${keyId}-${month}`,
  searchJob: (jobId: string) => `searchJob-${jobId}`,
  monitor: (monitorId: string) => `monitor-${monitorId}`,
  monitorRun: (runId: string) => `monitorRun-${runId}`,
  adminSession: (sessionHash: string) => `adminSession-${sessionHash}`,
  webhook: (webhookId: string) => `webhook-${webhookId}`,
  /** a replayed delivery's attempts are recorded on its replay's stream (docs/webhooks.md#replay-recorded-by-reference) */
  webhookDelivery: (deliveryId: string) => {
    const replayed = replayOfDelivery(deliveryId);
    return replayed ? `webhookReplay-${replayed.replayId}` : `webhookDelivery-${deliveryId}`;
  },
  webhookReplay: (replayId: string) => `webhookReplay-${replayId}`,
  monitorAlerts: (runId: string) => `monitorAlerts-${runId}`,
  keyLimits: (keyId: string) => `keyLimits-${keyId}`,
} as const;
