import { z } from 'zod';
import { IsoInstant } from './isoInstant.js';
import { crossFieldRules, JobStatus, OutputFormat, QueuePosition, SearchParameters, UsageResponse } from './search.js';

/**
 * The MCP tools' inputs and outputs (docs/mcp.md#tools). Inputs mirror `/v1`: `serp_search` is the submit body's own
 * schema (same names, limits and messages) plus what only an agent needs; `/v1` still validates what the tool forwards.
 */

/** How much of a result a tool returns: agents drown in 50–150 kB bodies, so `compact` is the default. */
export const ResultMode = z
  .enum(['compact', 'full'])
  .default('compact')
  .describe(
    'compact (default): positions, titles, links, snippets, the AI Overview text with its references and each SERP feature in a line or two (about a tenth of the size); full: the whole body of `output`',
  );

const outputArg = z
  .enum(['json', 'compat', 'html'])
  .default('json')
  .describe('json: the native result; compat: SerpApi names and envelope; html: a signed link to the raw Google pages');

const startArg = z
  .number()
  .int()
  .min(0)
  .max(1000)
  .optional()
  .describe('result offset: 10 returns organic results 11-20 (ten from the offset); omit for all of them');

export const SerpSearchInput = crossFieldRules(
  SearchParameters.extend({
    wait: z
      .boolean()
      .default(true)
      .describe(
        'true (default): poll until the search ends (up to max_wait_seconds) and return the result; false: return the job_id at once for serp_get_results',
      ),
    max_wait_seconds: z
      .number()
      .int()
      .min(1)
      .max(300)
      .default(50)
      .describe('how long wait=true polls before returning the job_id for serp_get_results (default 50)'),
    output: outputArg,
    mode: ResultMode,
  }).strict(),
);
export type SerpSearchInput = z.infer<typeof SerpSearchInput>;

export const SerpGetResultsInput = z
  .object({
    job_id: z.string().regex(/^[0-9a-f]{24}$/, 'job_id is the 24 hex characters serp_search returned'),
    output: outputArg,
    start: startArg,
    mode: ResultMode,
  })
  .strict();
export type SerpGetResultsInput = z.infer<typeof SerpGetResultsInput>;

/** One organic result as the compact view gives it. */
export const CompactOrganic = z.object({
  position: z.number().int(),
  title: z.string(),
  link: z.string().optional(),
  source: z.string().optional(),
  snippet: z.string().optional(),
  date: z.string().optional(),
});

export const CompactResult = z.object({
  keyword: z.string().optional(),
  targeting: z.record(z.string(), z.unknown()).optional().describe('what Google was sent: location, gl, hl, device'),
  total_results: z.number().optional(),
  pages_fetched: z.number().optional(),
  organic_results: z.array(CompactOrganic),
  ai_overview: z
    .object({
      text: z.string(),
      references: z.array(z.object({ index: z.number().int(), title: z.string(), link: z.string().optional() })),
    })
    .optional(),
  features: z
    .record(z.string(), z.array(z.string()))
    .describe('each SERP feature by name, as short lines: a question, a title with its link, an answer'),
});
export type CompactResult = z.infer<typeof CompactResult>;

/** What serp_search and serp_get_results return: where the job stands and, once it ended, its result. */
export const JobOutcome = z.object({
  job_id: z.string(),
  status: JobStatus,
  cached: z.boolean().optional(),
  output: OutputFormat.optional(),
  mode: z.enum(['compact', 'full']).optional(),
  detail: z.string().optional().describe('why a failed job failed'),
  result: z
    .union([CompactResult, z.record(z.string(), z.unknown())])
    .optional()
    .describe('compact: the CompactResult; full: the whole json or compat body'),
  html_url: z.string().optional(),
  expires_at: z.string().optional(),
  next: z.string().optional().describe('what to call next while the job runs'),
  queue: QueuePosition.optional().describe(
    'while the job waits: its lane, the jobs expected to start before it and the seconds until it should start',
  ),
});
export type JobOutcome = z.infer<typeof JobOutcome>;

export const SerpUsageOutput = UsageResponse;

/** `serp_rank_history` (docs/rank-tracking.md): a monitor by id, or a keyword and domain across the key's monitors. */
export const SerpRankHistoryInput = z
  .object({
    monitor_id: z.string().max(200).optional().describe('a monitor of this key (GET /v1/monitors lists them)'),
    keyword: z.string().max(2048).optional().describe('only this keyword (required without monitor_id)'),
    domain: z
      .string()
      .max(300)
      .optional()
      .describe('only this tracked domain, e.g. example.com (required without monitor_id)'),
    from: IsoInstant.optional().describe('ISO date or instant'),
    to: IsoInstant.optional().describe('ISO date or instant'),
  })
  .strict()
  .refine((v) => v.monitor_id !== undefined || (v.keyword !== undefined && v.domain !== undefined), {
    message: 'give monitor_id, or keyword and domain',
  });
export type SerpRankHistoryInput = z.infer<typeof SerpRankHistoryInput>;

/** a point of a monitor with pixel positions (docs/rank-tracking.md#pixel-positions), as the /v1 history gives it */
export const RankFold = z.object({
  pixels_from_top: z
    .number()
    .nullable()
    .describe('CSS pixels from the top of the first page to the best result (null: not on the first page)'),
  above_the_fold: z.boolean().describe("the best result showed on the device's first screen"),
});
export type RankFold = z.infer<typeof RankFold>;

export const SerpRankHistoryOutput = z.object({
  series: z.array(
    z.object({
      monitor_id: z.string(),
      keyword: z.string(),
      domain: z.string(),
      best: z.number().int().nullable().describe('best position in these points'),
      points: z
        .array(
          z.tuple([
            z.string(),
            z.union([z.number().int(), z.literal('not_ranked'), z.literal('failed')]),
            RankFold.optional(),
          ]),
        )
        .describe(
          '[checked_at, position | "not_ranked" | "failed", fold?], oldest first; fold only on a search measured in pixels',
        ),
      above_the_fold_share: z
        .number()
        .optional()
        .describe(
          '0–1: the searches measured in pixels whose best result showed on the first screen ÷ those measured (present when any was)',
        ),
    }),
  ),
});
export type SerpRankHistoryOutput = z.infer<typeof SerpRankHistoryOutput>;

/** `serp_screenshot`: a finished search's first screen, and where a domain's results lie on it (docs/mcp.md#tools). */
export const SerpScreenshotInput = z
  .object({
    job_id: z.string().regex(/^[0-9a-f]{24}$/, 'job_id is the 24 hex characters serp_search returned'),
    domain: z
      .string()
      .trim()
      .toLowerCase()
      .regex(/^(?=.{1,253}$)([a-z0-9-]+\.)+[a-z0-9-]{2,}$/, 'domain must be a domain name such as "example.com"')
      .optional()
      .describe("the tracked domain: its organic results' rectangles come with the image"),
  })
  .strict();
export type SerpScreenshotInput = z.infer<typeof SerpScreenshotInput>;

export const SerpScreenshotOutput = z.object({
  job_id: z.string(),
  viewport: z.object({ width: z.number().int(), height: z.number().int() }),
  domain: z.string().optional(),
  results: z
    .array(
      z.object({
        position: z.number().int(),
        link: z.string().optional(),
        rectangle: z.object({ x: z.number(), y: z.number(), width: z.number(), height: z.number() }).nullable(),
        above_the_fold: z.boolean(),
      }),
    )
    .describe("the domain's organic results (every organic result without a domain), with where each lies"),
});
export type SerpScreenshotOutput = z.infer<typeof SerpScreenshotOutput>;
