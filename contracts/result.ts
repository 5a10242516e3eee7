import { z } from 'zod';
import { Lane } from './lanes.js';

/**
 * The native result (`output=json`): exactly the spec's four top-level members (docs/api.md#outputs).
 * The parser owns the detail of each feature; this schema pins what every consumer may rely on.
 */
export const OrganicResult = z
  .object({
    position: z.number().int().positive(),
    title: z.string(),
    link: z.string().optional(),
    displayed_link: z.string().optional(),
    source: z.string().optional(),
    favicon: z.string().optional(),
    snippet: z.string().optional(),
    snippet_highlighted_words: z.array(z.string()).optional(),
    date: z.string().optional(),
    sitelinks: z.unknown().optional(),
    rich_snippet: z.unknown().optional(),
    key_moments: z
      .array(z.object({ text: z.string(), time: z.string(), link: z.string(), thumbnail: z.string().optional() }))
      .optional()
      .describe("a video result's chapters: start time as printed, title, link into the video at that time"),
    page: z.number().int().positive().optional(),
  })
  .passthrough();
export type OrganicResult = z.infer<typeof OrganicResult>;

export const AiOverview = z
  .object({
    text_blocks: z.array(z.record(z.string(), z.unknown())),
    references: z.array(z.record(z.string(), z.unknown())),
  })
  .passthrough();
export type AiOverview = z.infer<typeof AiOverview>;

export const SearchInformation = z
  .object({
    total_results: z.number().optional(),
    time_taken_displayed: z.number().optional(),
    query_displayed: z.string().optional(),
    spelling_fix: z.string().optional(),
    showing_results_for: z.string().optional(),
    organic_results_state: z.string().optional(),
  })
  .passthrough();

/** What the parser extracts from the pages of one search, before the service adds job metadata. */
export const ParsedSerp = z.object({
  organic_results: z.array(OrganicResult),
  serp_features: z.record(z.string(), z.unknown()),
  ai_overview: AiOverview.optional(),
  information: SearchInformation,
});
export type ParsedSerp = z.infer<typeof ParsedSerp>;

/** `search_metadata.targeting`: what the crawl sent Google (absent for jobs crawled before it was recorded). */
export const TargetingMetadata = z.object({
  /** the geotarget's canonical name, when the request gave a `location` */
  location: z.string().optional(),
  gl: z.string().optional(),
  hl: z.string().optional(),
  uule: z.string().optional(),
  google_domain: z.string(),
  device: z.string(),
});
export type TargetingMetadata = z.infer<typeof TargetingMetadata>;

export const SearchMetadata = z
  .object({
    id: z.string(),
    status: z.string(),
    cached: z.boolean(),
    created_at: z.string(),
    processed_at: z.string().optional(),
    total_time_taken: z.number().optional(),
    pages_fetched: z.number().int().optional(),
    parser_version: z.string().optional(),
    targeting: TargetingMetadata.optional(),
    requests: z
      .number()
      .int()
      .optional()
      .describe(
        'Google requests the crawl made: retries, redirects, a challenge reload and a session opening each count (0 when cached)',
      ),
    blocked: z.number().int().optional().describe('of those, answered with a block (CAPTCHA, challenge, consent, 429)'),
    browser_pages: z.number().int().optional().describe('of those, made by the browser; the rest went over plain HTTP'),
    bytes: z.number().int().optional().describe('bytes those requests brought'),
    lane: Lane.optional().describe(
      'the lane the search waited in: live, scheduled (a monitor run) or bulk (every job has it; a page parsed by `serp-api parse` has none)',
    ),
    queued_ms: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe(
        'from submit to its first Google request: its wait in the queue (0 for an answer from cache; every job has it)',
      ),
    parameters: z.record(z.string(), z.unknown()),
    information: SearchInformation,
  })
  .passthrough();

export const SerpResult = z.object({
  search_metadata: SearchMetadata,
  organic_results: z.array(OrganicResult),
  serp_features: z.record(z.string(), z.unknown()),
  ai_overview: AiOverview.optional(),
});
export type SerpResult = z.infer<typeof SerpResult>;
