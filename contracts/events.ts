import { z } from 'zod';
import { ParsedSerp } from './result.js';
import { SearchRequest } from './search.js';

/** Event names are contracts: never renamed, only added (DESIGN.md §3). Dates are ISO strings. */
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
 * The targeting a crawl used (DESIGN.md §6): the geotarget's canonical name when a `location` was resolved, the
 * gl / hl / uule sent to Google (explicit request values or the location's), the Google domain asked (also when
 * SERP_GOOGLE_ORIGIN replaced the origin) and the device impersonated.
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
 * dropped (issue 13). The event stays, as the audit record that the job ran and what it was charged.
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
  AdminSessionStarted,
  AdminSessionEnded,
]);
export type DomainEvent = z.infer<typeof DomainEvent>;
export type EventOf<T extends DomainEvent['type']> = Extract<DomainEvent, { type: T }>;

export const streams = {
  apiKey: (keyId: string) => `apiKey-${keyId}`,
  usage: (keyId: string, month: string) => `usage-${keyId}-${month}`,
  searchJob: (jobId: string) => `searchJob-${jobId}`,
  adminSession: (sessionHash: string) => `adminSession-${sessionHash}`,
} as const;
