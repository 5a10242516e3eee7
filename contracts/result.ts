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

/** Where a place Google names came from, by the phrase beside it (docs/locations.md#where-google-placed-a-search). */
export const LocationSource = z.enum(['ip_address', 'past_activity', 'places', 'precise', 'unknown']);
export type LocationSource = z.infer<typeof LocationSource>;

/**
 * The place Google says it searched from: the line at the foot of the page ("San Francisco, California - From your IP
 * address"), as the page writes it.
 */
export const DetectedLocation = z.object({
  name: z
    .string()
    .describe('the place as the page writes it, in the interface language: "Austin, TX", "94301, Palo Alto, CA"'),
  source: LocationSource.describe(
    "where Google says the place came from: the IP address (also how a uule's place is shown), past activity, the user's places, the device's precise position, or unknown (a phrase in a language not read)",
  ),
});
export type DetectedLocation = z.infer<typeof DetectedLocation>;

export const SearchInformation = z
  .object({
    total_results: z.number().optional(),
    time_taken_displayed: z.number().optional(),
    query_displayed: z.string().optional(),
    spelling_fix: z.string().optional(),
    showing_results_for: z.string().optional(),
    organic_results_state: z.string().optional(),
    detected_location: DetectedLocation.optional().describe(
      "where Google says it placed the search (the first page's location line); absent when the page does not say",
    ),
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

/**
 * `search_metadata.location_check` (docs/locations.md#the-check): where Google placed the search against where it was
 * asked to. A search placed elsewhere even after a retry on another route is `partial`, with the `reason`.
 */
export const LocationCheckMetadata = z.object({
  status: z
    .enum(['matched', 'mismatched', 'region_only', 'country_only', 'unverified'])
    .describe(
      'matched: the place asked for or one inside it; mismatched: elsewhere; region_only / country_only: only its region or country; unverified: the page or the request names no place to compare',
    ),
  requested: z.string().optional().describe('the geotarget asked for (canonical name)'),
  detected: DetectedLocation.optional().describe("Google's location line on the page the verdict is about"),
  detected_place: z.string().optional().describe('the geotarget that line was read as'),
  reason: z
    .string()
    .optional()
    .describe('why unverified; for a search placed elsewhere, the location_mismatch note: where Google placed it'),
  retries: z.number().int().describe('pages fetched again on another route because Google placed them elsewhere'),
});
export type LocationCheckMetadata = z.infer<typeof LocationCheckMetadata>;

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
    location_check: LocationCheckMetadata.optional().describe(
      'where Google placed the search against where it was asked to; absent for crawls before the check existed',
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
