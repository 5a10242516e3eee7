import { z } from 'zod';
import { IsoInstant } from './isoInstant.js';
import { ALERT_KINDS } from './monitorAlerts.js';
import { crossFieldRules, SearchParameters } from './search.js';

/**
 * Rank tracking (docs/rank-tracking.md): monitors, their runs and the history, visibility and changes read from them.
 * A monitor's targeting is `/v1/search`'s (same names, limits and cross-field rules).
 */

/** Where a feature of the SERP cites a domain, besides its organic results. */
export const RANK_FEATURES = [
  'ai_overview_citation',
  'featured_snippet',
  'people_also_ask',
  'local_pack',
  'top_stories',
  'sitelinks',
] as const;
export const RankFeature = z.enum(RANK_FEATURES);
export type RankFeature = z.infer<typeof RankFeature>;

/**
 * `example.com` (that host and www.), `*.example.com` (and every subdomain), `example.com/blog/` (URLs under that
 * path). Lowercased; a scheme, a port or a query is refused so that nobody wonders what it meant.
 */
export const DOMAIN_PATTERN =
  /^(\*\.)?(?=.{1,253}(\/|$))([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}(\/[^\s?#]*)?$/;
export const TrackedDomain = z
  .string({ error: 'each domain must be a string such as "example.com"' })
  .trim()
  .toLowerCase()
  .max(300, 'a domain must be at most 300 characters')
  .refine(
    (v) => DOMAIN_PATTERN.test(v),
    'each domain must be a host ("example.com"), "*.example.com" (every subdomain) or host/path ("example.com/blog/"), with no scheme',
  );

const keyword = SearchParameters.shape.keyword;

export const MONITOR_KEYWORDS_MAX = 10_000;

/** A keyword list: not empty, no duplicates once trimmed and whitespace-collapsed (case differs: Google's does too). */
export const KeywordList = z
  .array(keyword, { error: 'keywords must be an array of strings' })
  .min(1, 'keywords must not be empty')
  .max(MONITOR_KEYWORDS_MAX, `a monitor holds at most ${MONITOR_KEYWORDS_MAX} keywords`)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((k, i) => {
      if (seen.has(k)) ctx.addIssue({ code: 'custom', path: [i], message: `duplicate keyword "${k.slice(0, 100)}"` });
      seen.add(k);
    });
  });

const DomainList = z
  .array(TrackedDomain, { error: 'domains must be an array of strings' })
  .min(1, 'domains must hold at least your own domain (first), then competitors')
  .max(20, 'a monitor tracks at most 20 domains')
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((d, i) => {
      if (seen.has(d)) ctx.addIssue({ code: 'custom', path: [i], message: `duplicate domain "${d}"` });
      seen.add(d);
    });
  });

export const SCHEDULE_PRESETS = ['hourly', 'daily', 'weekly'] as const;
export const Schedule = z.union([
  z.enum(SCHEDULE_PRESETS),
  z
    .object({
      cron: z.string().trim().min(1).max(100).describe('five fields: minute hour day-of-month month day-of-week'),
      timezone: z.string().trim().min(1).max(64).default('UTC').describe('an IANA time zone, e.g. Europe/Berlin'),
    })
    .strict(),
]);
export type Schedule = z.infer<typeof Schedule>;

/**
 * The default CTR by position 1–20 that share of voice weighs positions with (docs/rank-tracking.md): a smoothed
 * curve in the range of the published organic click-through studies of 2023–25 (AWR, First Page Sage, Backlinko),
 * which agree on the shape (a steep first three, a long flat tail) more than on the figures. A monitor may set its own.
 */
export const DEFAULT_CTR_CURVE: readonly number[] = [
  0.28, 0.15, 0.1, 0.07, 0.05, 0.04, 0.03, 0.025, 0.02, 0.018, 0.012, 0.011, 0.01, 0.009, 0.008, 0.007, 0.006, 0.005,
  0.004, 0.003,
];

/** CTR by position (index 0 = position 1), at most 20 positions, each 0–1: what share of voice weighs positions by. */
export const CtrCurve = z
  .array(z.number().min(0).max(1), { error: 'ctr_curve must be an array of numbers between 0 and 1' })
  .min(1)
  .max(20, 'ctr_curve covers positions 1–20: at most 20 numbers');

const depth = z.number().int().min(10, 'depth is 10–100').max(100, 'depth is 10–100');

/** The targeting fields of `/v1/search` a monitor keeps for every keyword's search. */
const Targeting = SearchParameters.pick({
  location: true,
  uule: true,
  lat: true,
  lon: true,
  radius: true,
  device: true,
  gl: true,
  hl: true,
  engine_domain: true,
});
export type MonitorTargeting = z.infer<typeof Targeting>;

/** A monitor's alert settings, as its key sends them (`alerts` on POST / PATCH /v1/monitors). */
export const MonitorAlertsConfig = z
  .object({
    min_move: z.number().int().min(1).max(100).optional().describe('a move of at least this many positions'),
    top: z
      .array(z.number().int().min(1).max(100))
      .max(5)
      .optional()
      .describe('entering or leaving each of these tops, e.g. [3, 10]'),
    competitor_outranks: z.boolean().optional().describe('a competitor moved above your (first) domain'),
    url_changed: z.boolean().optional().describe('another URL of a domain ranks'),
    features: z.array(z.enum(RANK_FEATURES)).max(RANK_FEATURES.length).optional().describe('features gained or lost'),
    run_failed: z.boolean().optional().describe("a keyword's search failed (after the crawler's retries)"),
    fell_below_fold: z
      .boolean()
      .optional()
      .describe("a domain's best result went below the first screen (a monitor with pixel_positions)"),
  })
  .strict()
  .meta({
    examples: [
      {
        min_move: 3,
        top: [3, 10],
        competitor_outranks: true,
        url_changed: true,
        features: ['ai_overview_citation', 'featured_snippet'],
        run_failed: true,
      },
    ],
  });
export type MonitorAlertsConfig = z.infer<typeof MonitorAlertsConfig>;

const name = z.string().trim().min(1, 'name must not be empty').max(200, 'name must be at most 200 characters');

export const CreateMonitorBody = crossFieldRules(
  Targeting.extend({
    name,
    keywords: KeywordList,
    domains: DomainList,
    depth: depth.default(100).describe('results examined per search, 10–100 (default 100)'),
    schedule: Schedule,
    ctr_curve: CtrCurve.optional(),
    backfill: z
      .boolean()
      .default(false)
      .describe('turn earlier stored searches of this key with the same keyword and targeting into history'),
    alerts: MonitorAlertsConfig.optional().describe('what raises an alert when a run completes (docs/webhooks.md)'),
    pixel_positions: z
      .boolean()
      .optional()
      .describe('render each search once: points carry pixels_from_top and above_the_fold (one render a search)'),
  }).strict(),
).meta({
  examples: [
    {
      name: 'Coffee in Austin',
      keywords: ['coffee shop', 'espresso machine'],
      domains: ['example.com', 'rival.com', '*.competitor.org'],
      location: 'Austin, Texas, United States',
      device: 'mobile',
      schedule: 'daily',
      backfill: true,
    },
    {
      name: 'Weekday mornings, Berlin',
      keywords: ['kaffee'],
      domains: ['example.de/shop/'],
      gl: 'de',
      hl: 'de',
      depth: 50,
      schedule: { cron: '0 6 * * 1-5', timezone: 'Europe/Berlin' },
    },
  ],
});
export type CreateMonitorInput = z.infer<typeof CreateMonitorBody>;

export const PatchMonitorBody = z
  .object({
    name: name.optional(),
    add_keywords: z.array(keyword).max(MONITOR_KEYWORDS_MAX).optional(),
    remove_keywords: z.array(keyword).max(MONITOR_KEYWORDS_MAX).optional(),
    add_domains: z.array(TrackedDomain).max(20).optional(),
    remove_domains: z.array(TrackedDomain).max(20).optional(),
    schedule: Schedule.optional(),
    paused: z.boolean().optional(),
    depth: depth.optional(),
    ctr_curve: CtrCurve.nullable().optional().describe('null goes back to the default curve'),
    alerts: MonitorAlertsConfig.nullable().optional().describe('null: no alerts'),
    pixel_positions: z.boolean().optional().describe('pixel positions from the next run on (one render a search)'),
  })
  .strict()
  .refine((b) => Object.values(b).some((v) => v !== undefined), 'send at least one change')
  .meta({
    examples: [
      { add_keywords: ['cold brew'], remove_domains: ['rival.com'] },
      { paused: true },
      { schedule: { cron: '0 6 * * 1-5', timezone: 'Europe/Berlin' } },
    ],
  });
export type PatchMonitorBody = z.infer<typeof PatchMonitorBody>;

export const RunMonitorBody = z
  .object({
    no_cache: z
      .boolean()
      .default(true)
      .describe('true (default): crawl every keyword fresh; false: a cached result of the same search is accepted'),
  })
  .strict()
  .default({ no_cache: true })
  .meta({ examples: [{}, { no_cache: false }] });

export const MonitorResponse = z
  .object({
    monitor_id: z.string(),
    name: z.string(),
    keywords: z.array(z.string()),
    domains: z.array(z.string()),
    targeting: z.record(z.string(), z.unknown()).describe('the /v1/search targeting every keyword is searched with'),
    depth: z.number().int(),
    schedule: Schedule,
    ctr_curve: z.array(z.number()).describe('the CTR curve share of voice uses (the default unless overridden)'),
    paused: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
    last_run_at: z.string().nullable(),
    next_run_at: z.string().nullable().describe('the next scheduled slot (null while paused)'),
    backfill: z.enum(['none', 'pending', 'done']),
    alerts: MonitorAlertsConfig.nullable().describe('what raises an alert when a run completes (null: nothing)'),
    pixel_positions: z.boolean().describe('each search is rendered once and its points carry pixel positions'),
    warnings: z
      .array(z.string())
      .optional()
      .describe(
        'on create and change only: the fleet cannot crawl what this monitor and the others plan, with room for live searches; the shortfall and the routes that would close it (docs/fleet.md#capacity-against-demand). The monitor is saved all the same.',
      ),
  })
  .meta({
    examples: [
      {
        monitor_id: 'mon_3f9a1c2b7d4e5f60718293a4',
        name: 'Coffee in Austin',
        keywords: ['coffee shop', 'espresso machine'],
        domains: ['example.com', 'rival.com'],
        targeting: { location: 'Austin, Texas, United States', device: 'mobile' },
        depth: 100,
        schedule: 'daily',
        ctr_curve: [0.28, 0.15, 0.1],
        paused: false,
        created_at: '2026-03-02T09:15:00.000Z',
        updated_at: '2026-03-02T09:15:00.000Z',
        last_run_at: '2026-03-02T00:00:00.000Z',
        next_run_at: '2026-03-03T00:00:00.000Z',
        backfill: 'done',
        alerts: { min_move: 3, top: [3, 10], competitor_outranks: true, run_failed: true },
        pixel_positions: false,
      },
    ],
  });

export const MonitorList = z.object({ monitors: z.array(MonitorResponse) });

export const RunResponse = z
  .object({
    run_id: z.string(),
    jobs: z.array(
      z.object({
        keyword: z.string(),
        job_id: z.string(),
        submit_at: z.string().describe('when the job is submitted (paced under the key rate); 404 before then'),
      }),
    ),
  })
  .meta({
    examples: [
      {
        run_id: 'run_0195a3c4b5d6e7f8a9b0c1d2',
        jobs: [
          { keyword: 'coffee shop', job_id: '0195a3c4b5d6a1b2c3d4e5f6', submit_at: '2026-03-02T09:16:00.000Z' },
          { keyword: 'espresso machine', job_id: '0195a3c4c4f8b2c3d4e5f6a7', submit_at: '2026-03-02T09:16:06.000Z' },
        ],
      },
    ],
  });

const range = {
  from: IsoInstant.optional().describe('ISO date or instant (inclusive)'),
  to: IsoInstant.optional().describe('ISO date or instant (inclusive; a date means the whole day)'),
};
const rangeRule = <T extends { from?: string; to?: string }>(v: T, ctx: z.RefinementCtx) => {
  if (v.from && v.to && rangeBounds(v.from, v.to).from > rangeBounds(v.from, v.to).to) {
    ctx.addIssue({ code: 'custom', path: ['from'], message: 'from must not be after to' });
  }
};

/** `from` and `to` as instants: a bare date as `to` means the end of that day (UTC). */
export const rangeBounds = (from?: string, to?: string) => ({
  from: from ? Date.parse(from) : 0,
  to: to ? (/^\d{4}-\d{2}-\d{2}$/.test(to) ? Date.parse(to) + 86_399_999 : Date.parse(to)) : 8.64e15,
});

export const HistoryQuery = z
  .object({
    keyword: z.string().max(2048).optional(),
    domain: z.string().max(300).optional(),
    ...range,
    format: z.enum(['json', 'csv']).default('json'),
  })
  .superRefine(rangeRule);

export const RangeQuery = z.object(range).superRefine(rangeRule);

export const ChangesQuery = z
  .object({
    ...range,
    min_move: z.coerce
      .number({ error: 'min_move must be a number of positions' })
      .int()
      .min(1, 'min_move must be at least 1')
      .max(100)
      .default(3),
  })
  .superRefine(rangeRule);

export const PointStatus = z.enum(['ranked', 'not_ranked', 'failed']);

export const HistoryPoint = z.object({
  keyword: z.string(),
  domain: z.string(),
  checked_at: z.string(),
  run_id: z.string(),
  job_id: z.string(),
  status: PointStatus,
  position: z.number().int().nullable(),
  url: z.string().nullable(),
  failure: z.string().nullable().describe('why the search failed (captcha, js_challenge, timeout, …); else null'),
  features: z.array(RankFeature),
  pixels_from_top: z
    .number()
    .nullable()
    .optional()
    .describe('a monitor with pixel_positions: the top of the best result on the first page (null: not there)'),
  above_the_fold: z
    .boolean()
    .optional()
    .describe('a monitor with pixel_positions: the best result on the first screen'),
});
export type HistoryPoint = z.infer<typeof HistoryPoint>;

export const HistoryResponse = z.object({ monitor_id: z.string(), points: z.array(HistoryPoint) }).meta({
  examples: [
    {
      monitor_id: 'mon_3f9a1c2b7d4e5f60718293a4',
      points: [
        {
          keyword: 'coffee shop',
          domain: 'example.com',
          checked_at: '2026-03-01T00:03:12.000Z',
          run_id: 'run_0195a3c4b5d6e7f8a9b0c1d2',
          job_id: '0195a3c4b5d6a1b2c3d4e5f6',
          status: 'ranked',
          position: 4,
          url: 'https://example.com/coffee',
          failure: null,
          features: ['people_also_ask'],
        },
        {
          keyword: 'coffee shop',
          domain: 'example.com',
          checked_at: '2026-03-02T00:02:55.000Z',
          run_id: 'run_0195a8eaa1b2c3d4e5f6a7b8',
          job_id: '0195a8eaa1b2f6e5d4c3b2a1',
          status: 'failed',
          position: null,
          url: null,
          failure: 'captcha',
          features: [],
        },
      ],
    },
  ],
});
export type HistoryResponse = z.infer<typeof HistoryResponse>;

export const VisibilityDay = z.object({
  date: z.string(),
  keywords: z.number().int().describe('keywords searched successfully that day (the share of voice divides by it)'),
  average_position: z.number().nullable().describe('over the keywords where the domain ranked'),
  ranked: z.number().int(),
  top3: z.number().int(),
  top10: z.number().int(),
  top100: z.number().int(),
  share_of_voice: z.number().describe('0–1: Σ CTR(position) ÷ keywords, positions 1–20'),
  ai_overview_citations: z.number().int(),
  above_the_fold: z
    .number()
    .int()
    .optional()
    .describe('a monitor with pixel_positions: keywords whose best result showed on the first screen'),
  above_the_fold_share: z
    .number()
    .optional()
    .describe('0–1: above_the_fold ÷ the keywords measured in pixels that day (present when any was)'),
});

export const VisibilityResponse = z
  .object({
    monitor_id: z.string(),
    domains: z.array(z.object({ domain: z.string(), days: z.array(VisibilityDay) })),
  })
  .meta({
    examples: [
      {
        monitor_id: 'mon_3f9a1c2b7d4e5f60718293a4',
        domains: [
          {
            domain: 'example.com',
            days: [
              {
                date: '2026-03-01',
                keywords: 2,
                average_position: 4.5,
                ranked: 2,
                top3: 0,
                top10: 2,
                top100: 2,
                share_of_voice: 0.045,
                ai_overview_citations: 1,
              },
            ],
          },
        ],
      },
    ],
  });

export const CHANGE_KINDS = ['entered', 'left', 'moved', 'url_changed', 'feature_gained', 'feature_lost'] as const;
export const Change = z.object({
  keyword: z.string(),
  domain: z.string(),
  kind: z.enum(CHANGE_KINDS),
  top: z.number().int().optional().describe('entered / left: 10, or 100 (the monitor depth when below 100)'),
  feature: RankFeature.optional().describe('feature_gained / feature_lost: which'),
  from_position: z.number().int().nullable(),
  to_position: z.number().int().nullable(),
  from_url: z.string().nullable(),
  to_url: z.string().nullable(),
  at: z.string(),
  run_id: z.string(),
});
export type Change = z.infer<typeof Change>;

export const BestPosition = z.object({
  keyword: z.string(),
  domain: z.string(),
  position: z.number().int(),
  url: z.string(),
  at: z.string(),
});

export const ChangesResponse = z
  .object({ monitor_id: z.string(), changes: z.array(Change), best: z.array(BestPosition) })
  .meta({
    examples: [
      {
        monitor_id: 'mon_3f9a1c2b7d4e5f60718293a4',
        changes: [
          {
            keyword: 'coffee shop',
            domain: 'example.com',
            kind: 'entered',
            top: 10,
            from_position: 14,
            to_position: 4,
            from_url: 'https://example.com/coffee',
            to_url: 'https://example.com/coffee',
            at: '2026-03-02T00:02:55.000Z',
            run_id: 'run_0195a8eaa1b2c3d4e5f6a7b8',
          },
        ],
        best: [
          {
            keyword: 'coffee shop',
            domain: 'example.com',
            position: 4,
            url: 'https://example.com/coffee',
            at: '2026-03-02T00:02:55.000Z',
          },
        ],
      },
    ],
  });

/** `GET /v1/monitors/{id}/alerts` (docs/rank-tracking.md#alerts). */
export const AlertResponse = z.object({
  alert_id: z.string(),
  run_id: z.string(),
  kind: z.enum(ALERT_KINDS),
  keyword: z.string().nullable(),
  domain: z.string().nullable(),
  top: z.number().int().nullable(),
  feature: z.string().nullable(),
  competitor: z.string().nullable(),
  from_position: z.number().int().nullable(),
  to_position: z.number().int().nullable(),
  from_url: z.string().nullable(),
  to_url: z.string().nullable(),
  failures: z.array(z.object({ keyword: z.string(), failure: z.string() })).nullable(),
  at: z.string(),
  raised_at: z.string(),
});
export type AlertResponse = z.infer<typeof AlertResponse>;

export const AlertList = z.object({ monitor_id: z.string(), alerts: z.array(AlertResponse) }).meta({
  examples: [
    {
      monitor_id: 'mon_3f9a1c2b7d4e5f60718293a4',
      alerts: [
        {
          alert_id: 'alr_0195a8eaa1b2c3d4e5f6a7b8',
          run_id: 'run_0195a8eaa1b2c3d4e5f6a7b8',
          kind: 'left_top',
          keyword: 'coffee shop',
          domain: 'example.com',
          top: 3,
          feature: null,
          competitor: null,
          from_position: 2,
          to_position: 7,
          from_url: 'https://example.com/coffee',
          to_url: 'https://example.com/coffee',
          failures: null,
          at: '2026-03-02T00:02:55.000Z',
          raised_at: '2026-03-02T00:03:01.000Z',
        },
      ],
    },
  ],
});
