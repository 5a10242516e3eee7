import { z } from 'zod';
import { GL_CODES, GOOGLE_DOMAINS, HL_CODES, TBM_VALUES } from './googleParams.js';
import { Lane, Priority } from './lanes.js';
import { PixelPositionsFlag } from './screenshots.js';

/** Devices the crawler can impersonate: each picks a user agent, client hints and a viewport. */
export const Device = z.enum(['desktop', 'mobile', 'tablet']);
export type Device = z.infer<typeof Device>;

export const OutputFormat = z.enum(['html', 'json', 'compat']);
export type OutputFormat = z.infer<typeof OutputFormat>;

const googleDomainSet = new Set<string>(GOOGLE_DOMAINS);
const glSet = new Set<string>(GL_CODES);
const hlSet = new Set<string>(HL_CODES);

/** Google's 0/1 switches; agents send booleans and query strings send "0"/"1", so all three mean the same. */
const zeroOne = (name: string) =>
  z.union(
    [
      z.literal(0),
      z.literal(1),
      z.boolean().transform((b): 0 | 1 => (b ? 1 : 0)),
      z.enum(['0', '1']).transform((v): 0 | 1 => (v === '1' ? 1 : 0)),
    ],
    { error: `${name} must be 0 or 1 (true or false also work)` },
  );
const shortText = (max: number) => z.string().trim().min(1).max(max);

/** `depth`'s bounds: one Google page (about ten results) to the top 100, which is also the default (docs/depth.md). */
export const MIN_DEPTH = 10;
export const MAX_DEPTH = 100;

/**
 * A request's depth: requests recorded before `depth` existed have none and were crawled for the top 100. The
 * projector's validation fills the default in; a stream folded directly (readJobState) does not, hence this.
 */
export const depthOf = (request: { depth?: number }): number => request.depth ?? MAX_DEPTH;

/** Google pages a crawl of `depth` fetches at most (ten results a page since September 2025). */
export const pagesFor = (depth: number): number => Math.ceil(depth / 10);

/**
 * Every targeting and Google parameter a search accepts, shared by the native body, the compat query
 * and the MCP search tool. Field limits: docs/decisions.md#validation-and-limits.
 */
export const SearchParameters = z.object({
  keyword: z
    .string({ error: 'keyword is required and must be a string' })
    .transform((s) => s.trim().replace(/\s+/g, ' '))
    .pipe(
      z
        .string()
        .min(1, 'keyword must not be empty')
        .max(2048, 'keyword must be at most 2048 characters (after trimming and collapsing spaces)'),
    )
    // the limits as JSON Schema shows them (a transform hides the pipe's own)
    .meta({
      minLength: 1,
      maxLength: 2048,
      description: 'the search, as typed into Google (trimmed, spaces collapsed)',
    }),
  location: shortText(256)
    .optional()
    .describe(
      'a place to search from, as "City, Region, Country" ("Austin, Texas, United States") or a country ("Germany")',
    ),
  gl: z
    .string()
    .trim()
    .toLowerCase()
    .refine((v) => glSet.has(v), 'gl must be a two-letter Google country code such as "us"')
    .optional()
    .describe('country of the results (two letters, e.g. us, de); location sets it'),
  hl: z
    .string()
    .trim()
    .toLowerCase()
    .refine((v) => hlSet.has(v), 'hl must be a Google interface-language code such as "en" or "pt-br"')
    .optional()
    .describe('interface language, e.g. en, de, pt-br; location sets it'),
  device: Device.default('desktop').describe('the device Google sees: desktop, mobile or tablet'),
  stop_domain: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^(?=.{1,253}$)([a-z0-9-]+\.)+[a-z0-9-]{2,}$/, 'stop_domain must be a domain name such as "example.com"')
    .optional()
    .describe('rank check: stop fetching pages once this domain appears in the organic results'),
  depth: z
    .number({ error: "depth must be a number of results: 10 to 100 (10 is Google's first page)" })
    .int('depth must be a whole number of results from 10 to 100')
    .min(MIN_DEPTH, "depth must be at least 10: Google's first page holds about 10 results")
    .max(MAX_DEPTH, 'depth must be at most 100: Google serves no more than the top 100')
    .default(MAX_DEPTH)
    .meta({
      description:
        'organic results wanted (10 to 100, default 100): the crawl fetches ceil(depth / 10) Google pages at most, so 10 is one request; a cached result at least this deep answers it',
      examples: [10, 30, 100],
    }),
  capture_aio: z
    .boolean()
    .default(true)
    .describe('capture the AI Overview (default); false skips it, crawls faster and returns no ai_overview'),
  pixel_positions: z
    .boolean()
    .optional()
    .describe(
      'true: the first page is rendered and every result and feature block gets its rectangle, pixels_from_top and above_the_fold (one render; docs/screenshots.md)',
    ),
  uule: shortText(512).optional().describe("Google's encoded location (instead of location)"),
  lat: z.number().min(-90).max(90).optional().describe('latitude to search from (with lon; instead of location)'),
  lon: z.number().min(-180).max(180).optional().describe('longitude to search from (with lat)'),
  radius: z.number().positive().max(1_000_000).optional().describe('metres around lat/lon'),
  engine_domain: z
    .string()
    .trim()
    .toLowerCase()
    // "www.google.com" is Google's own host: the crawler adds www. itself
    .transform((v) => v.replace(/^www\./, ''))
    .refine(
      (v) => googleDomainSet.has(v),
      'engine_domain must be one of Google\'s own search domains, such as "google.com" or "google.co.uk"',
    )
    .optional()
    .describe('the Google domain to search on, e.g. google.co.uk (default google.com)'),
  tbs: shortText(256).optional().describe('Google filters, e.g. qdr:d (past day), qdr:w, qdr:m, qdr:y'),
  tbm: z
    .enum(TBM_VALUES)
    .optional()
    .describe('a Google tab: nws news, isch images, vid videos, shop shopping, lcl places, pts patents'),
  safe: z.enum(['active', 'off']).optional().describe('SafeSearch'),
  nfpr: zeroOne('nfpr').optional().describe('1: no autocorrection of the query'),
  filter: zeroOne('filter').optional().describe('0: show similar and omitted results'),
  lr: shortText(256).optional().describe('restrict to languages, e.g. lang_en|lang_fr'),
  cr: shortText(256).optional().describe('restrict to countries, e.g. countryUS|countryFR'),
  ludocid: shortText(64).optional().describe("a Google place's id (its knowledge panel)"),
  lsig: shortText(128).optional(),
  kgmid: shortText(128).optional().describe('a Knowledge Graph id, e.g. /m/0dl567'),
  si: shortText(2048).optional(),
  ibp: shortText(256).optional(),
  uds: shortText(2048).optional(),
  color_scheme: z.enum(['light', 'dark']).optional().describe("Google's page theme"),
  // Google's advanced-search fields (exact phrase, excluded words, site, date range …), passed on unchanged
  as_dt: z.enum(['i', 'e']).optional().describe('as_sitesearch: i include, e exclude'),
  as_epq: shortText(512).optional().describe('exact phrase'),
  as_eq: shortText(512).optional().describe('none of these words'),
  as_lq: shortText(512).optional().describe('pages that link to this URL'),
  as_nlo: shortText(64).optional().describe('number range from'),
  as_nhi: shortText(64).optional().describe('number range to'),
  as_oq: shortText(512).optional().describe('any of these words'),
  as_q: shortText(512).optional().describe('all of these words'),
  as_qdr: z
    .string()
    .trim()
    .regex(/^(all|[hdwmy]\d{0,3})$/, 'as_qdr must be all, or h, d, w, m or y with an optional count (d10)')
    .optional()
    .describe('last hour/day/week/month/year'),
  as_rq: shortText(512).optional().describe('pages similar to this URL'),
  as_sitesearch: shortText(256).optional().describe('a site or domain'),
  no_cache: z
    .boolean()
    .default(false)
    .describe('true: crawl again even when an identical search was answered within the cache TTL (costs quota)'),
});

/** lat/lon, location/uule and radius rules across fields: the native body, the compat query and the MCP tool. */
export const crossFieldRules = <
  T extends z.ZodType<Pick<z.infer<typeof SearchParameters>, 'location' | 'uule' | 'lat' | 'lon' | 'radius'>>,
>(
  schema: T,
) =>
  schema.superRefine((v, ctx) => {
    if (v.location && v.uule) {
      ctx.addIssue({ code: 'custom', path: ['uule'], message: 'give either location or uule, not both' });
    }
    if ((v.lat === undefined) !== (v.lon === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['lat'], message: 'lat and lon must be given together' });
    }
    if (v.radius !== undefined && v.lat === undefined) {
      ctx.addIssue({ code: 'custom', path: ['radius'], message: 'radius needs lat and lon' });
    }
    if (v.lat !== undefined && (v.location || v.uule)) {
      ctx.addIssue({ code: 'custom', path: ['lat'], message: 'give lat/lon or location/uule, not both' });
    }
  });

/**
 * Request members that are Google's own URL parameters, under Google's names, in the order a browser sends them.
 * The crawler passes them into the URL unchanged, and SerpApi's google engine takes them under the same names.
 */
export const GOOGLE_PASS_THROUGH = [
  'tbm',
  'tbs',
  'safe',
  'nfpr',
  'filter',
  'lr',
  'cr',
  'ludocid',
  'lsig',
  'kgmid',
  'si',
  'ibp',
  'uds',
  'as_dt',
  'as_epq',
  'as_eq',
  'as_lq',
  'as_nlo',
  'as_nhi',
  'as_oq',
  'as_q',
  'as_qdr',
  'as_rq',
  'as_sitesearch',
] as const satisfies readonly (keyof z.infer<typeof SearchParameters>)[];

/** The normalised search request as it travels in events and job messages (defaults applied). */
export const SearchRequest = crossFieldRules(SearchParameters);
export type SearchRequest = z.infer<typeof SearchParameters>;

/** `POST /v1/search`: unknown members are refused (422) so typos never pass silently. */
export const SubmitSearchBody = crossFieldRules(
  SearchParameters.extend({
    async: z.boolean().default(true),
    priority: Priority.default('live').describe(
      'the lane the search waits in: live (the default: interactive searches, served first) or bulk (batches, which keep a guaranteed share of the fleet behind live searches; docs/fleet.md#lanes-and-fair-share)',
    ),
  }).strict(),
).meta({
  examples: [
    { keyword: 'coffee', location: 'Austin, Texas, United States', device: 'mobile' },
    { keyword: 'best running shoes', gl: 'de', hl: 'de', stop_domain: 'example.com' },
    { keyword: 'coffee', location: 'Austin, Texas, United States', depth: 10 },
    { keyword: 'coffee', depth: 100, priority: 'bulk' },
  ],
});
export type SubmitSearchBody = z.infer<typeof SubmitSearchBody>;

export const JobId = z.string().regex(/^[0-9a-f]{24}$/, 'job ids are 24 lowercase hex characters');

export const JobStatus = z.enum(['queued', 'running', 'done', 'partial', 'failed']);
export type JobStatus = z.infer<typeof JobStatus>;

/**
 * Where a job not yet ended stands (docs/fleet.md#lanes-and-fair-share): the jobs of its lane the fair scheduler will
 * start before it, and when it should start, from the lane's recent pace; both 0 once it is crawling. An estimate:
 * other keys' searches submitted later may still go first, as fairness between keys wants.
 */
export const QueuePosition = z.object({
  lane: Lane,
  ahead: z.number().int().nonnegative().describe('jobs of its lane expected to start before it'),
  estimated_start_s: z
    .number()
    .nonnegative()
    .nullable()
    .describe(
      "seconds until its first Google request: an estimate from the lane's recent pace (its crawls of the last minute); null while nothing is measured",
    ),
});
export type QueuePosition = z.infer<typeof QueuePosition>;

export const SubmitSearchResponse = z.object({
  job_id: z.string(),
  status: JobStatus,
  cached: z.boolean(),
  queue: QueuePosition.optional().describe('a queued job only: where it stands'),
});
export type SubmitSearchResponse = z.infer<typeof SubmitSearchResponse>;

export const RunningResponse = z.object({
  job_id: z.string(),
  status: z.literal('running'),
  queue: QueuePosition.optional().describe('where it stands, while the read models know the job'),
});

export const FailedResponse = z.object({ job_id: z.string(), status: z.literal('failed'), detail: z.string() });

export const HtmlLinkResponse = z.object({
  job_id: z.string(),
  status: JobStatus,
  html_url: z.string(),
  expires_at: z.string(),
  location_check: z
    .enum(['mismatched', 'region_only', 'country_only'])
    .optional()
    .describe(
      'only for a search Google placed elsewhere even on another route: its pages are not from the place asked for',
    ),
});

const outputParam = OutputFormat.default('html').describe('html (a signed link to the raw pages), json or compat');

/**
 * Query strings are lenient where bodies are strict: a cache-buster (`?_=123`) or a tracking parameter is ignored,
 * not refused. An empty `start=` means no offset.
 */
export const FetchQuery = z.object({
  output: outputParam,
  start: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce
      .number({ error: 'start must be a number of results to skip: 0, 10, 20, …' })
      .int('start must be a whole number: 0, 10, 20, …')
      .min(0, 'start must be 0 or more')
      .max(1000, 'start must be at most 1000')
      .optional(),
  ),
  pixel_positions: PixelPositionsFlag.optional().describe(
    "1: a finished json or compat result with its first page's pixel positions (docs/screenshots.md#pixel-positions)",
  ),
});

export const SubmitQuery = z.object({ output: outputParam });

export const UsageResponse = z.object({
  tier: z.string(),
  monthly_quota: z.number().int(),
  used_this_month: z.number().int(),
  remaining: z.number().int().nullable(),
  rate_limit_per_min: z.number().int(),
});
export type UsageResponse = z.infer<typeof UsageResponse>;
