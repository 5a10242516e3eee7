import { z } from 'zod';
import { LocationCheckMetadata } from './result.js';

/**
 * SerpApi's envelope as the compat answers carry it (docs/compat.md#envelope), for documentation and generated
 * clients: the named blocks are typed, and each SERP feature (`related_questions`, `top_stories`, …) comes at the top
 * level under its own name. Answers are sent pre-serialised, so this schema never re-validates a result.
 */
const block = (what: string) => z.record(z.string(), z.unknown()).optional().describe(what);
const list = (what: string) => z.array(z.record(z.string(), z.unknown())).optional().describe(what);

/**
 * Every SERP feature the parser can report, under SerpApi's name (or one of ours where SerpApi has none), each at the
 * top level of a compat answer and only when the page has it (docs/parser.md). A name the parser starts to emit must
 * be added here: test/api/resultSchema.test.ts validates every fixture page's answers against the served schema.
 */
export const COMPAT_FEATURES = {
  answer_box: block('the answer above the results (featured snippet, definition, calculator, …)'),
  knowledge_graph: block('the knowledge panel: title, type, description, source, facts under their labels'),
  other_knowledge_graphs: list('further panels on the page (a name of ours): each read like knowledge_graph'),
  related_questions: list('People also ask'),
  local_results: block('the local pack: places, more_locations_link'),
  ads: list('text ads, top and bottom'),
  shopping_results: list('product listing ads'),
  immersive_products: list('the product grid'),
  top_stories: list('Top stories'),
  inline_videos: list('videos and short videos'),
  inline_images: list('the image pack: title (alt text), source page, thumbnail'),
  perspectives: list('Perspectives / What people are saying'),
  discussions_and_forums: list('Discussions and forums'),
  jobs_results: list('Jobs'),
  recipes_results: list('Recipes'),
  twitter_results: block("an X (Twitter) account's card and posts"),
  news_results: list('the news tab: articles (tbm=nws)'),
  buying_guide: block('the buying guide (a name of ours)'),
  related_searches: list('Related searches'),
  filters: list('the filter chips above the results'),
};

export const CompatResult = z
  .object({
    search_metadata: z
      .object({
        id: z.string().describe('24 hex characters: the job id'),
        status: z.enum(['Processing', 'Queued', 'Success', 'Error']),
        json_endpoint: z.string().optional(),
        raw_html_file: z.string().optional(),
        created_at: z.string().describe('YYYY-MM-DD HH:MM:SS UTC'),
        processed_at: z.string().nullable().optional().describe('null while processing and after an error'),
        google_url: z.string().optional(),
        total_time_taken: z.number().optional(),
        lane: z.enum(['live', 'scheduled', 'bulk']).optional().describe('ours: the lane the search waited in'),
        queued_ms: z.number().int().optional().describe('ours: from submit to its first Google request'),
        location_check: LocationCheckMetadata.optional().describe(
          'a field of ours: where Google placed the search against where it was asked to (docs/locations.md)',
        ),
      })
      .catchall(z.unknown()),
    search_parameters: z.record(z.string(), z.unknown()).optional(),
    search_information: z.record(z.string(), z.unknown()).optional(),
    organic_results: z.array(z.record(z.string(), z.unknown())).optional(),
    ai_overview: z.record(z.string(), z.unknown()).optional(),
    ...COMPAT_FEATURES,
    pagination: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("Google's page navigation as SerpApi gives it: current, next, other_pages"),
    serpapi_pagination: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('the same links on this service (follow `next` for the next page)'),
    error: z.string().optional().describe('why there are no results (a failed or empty search)'),
  })
  .describe("SerpApi's names and envelope; each SERP feature comes at the top level under its own name");
export type CompatResult = z.infer<typeof CompatResult>;

/** SerpApi's error body (`error`), with the same text under `detail`, this service's name for it. */
export const CompatError = z.object({ error: z.string(), detail: z.string() });

const text = (description: string) => z.string().optional().describe(description);

/**
 * `GET /search` under SerpApi's parameter names (docs/compat.md#parameters). Documentation: the route reads the
 * query leniently itself, so unknown parameters (`source`, `json_restrictor`, …) are ignored, not refused.
 */
export const CompatSearchQuery = z.object({
  engine: text('google (the only engine)'),
  q: text('the search (required)'),
  api_key: text('your key (or X-API-Key / Authorization: Bearer)'),
  location: text('a location name ("Austin, Texas, United States") or a google_id from /locations.json'),
  uule: text("Google's encoded location (not with location)"),
  pixel_positions: text(
    'true: every result and feature block with its rectangle on the rendered first page (docs/compat.md#screenshots)',
  ),
  gl: text('country code'),
  hl: text('interface language'),
  google_domain: text('google.com (default), google.co.uk, …'),
  device: z.enum(['desktop', 'tablet', 'mobile']).optional(),
  start: text('offset into the merged top 100 (0–99); the crawl goes start + num deep'),
  num: text('results in the answer (1–100, default 10: Google’s first page; 100: the merged top 100 at once)'),
  tbm: text('isch, lcl, nws, shop, vid, pts'),
  tbs: text('advanced filters, e.g. qdr:d'),
  safe: z.enum(['active', 'off']).optional(),
  nfpr: text('1 excludes auto-corrected results'),
  filter: text('0 turns off the similar/omitted results filters'),
  lr: text('lang_xx|lang_yy'),
  cr: text('countryXX|countryYY'),
  ludocid: text('Google place id'),
  lsig: text(''),
  kgmid: text('knowledge graph id'),
  si: text(''),
  ibp: text(''),
  uds: text(''),
  as_dt: text(''),
  as_epq: text(''),
  as_eq: text(''),
  as_lq: text(''),
  as_nlo: text(''),
  as_nhi: text(''),
  as_oq: text(''),
  as_q: text(''),
  as_qdr: text(''),
  as_rq: text(''),
  as_sitesearch: text(''),
  no_cache: text('true: never answer from the cache (not with async)'),
  async: text('true: answer at once with status Processing; fetch /searches/{id}.json later'),
  priority: z
    .enum(['live', 'bulk'])
    .optional()
    .describe('ours: the lane the search waits in, live (the default) or bulk (docs/fleet.md#lanes-and-fair-share)'),
  output: z.enum(['json', 'html']).optional(),
  search_id: text(
    'a search of yours to page through (pagination links carry it): no crawl, no quota as far as that search goes; past it, a new search',
  ),
});

export const CompatAccount = z.object({
  account_id: z.string(),
  api_key: z.string().describe('the key, masked: its first characters only'),
  account_email: z.string().nullable(),
  account_status: z.string(),
  plan_id: z.string(),
  plan_name: z.string(),
  plan_monthly_price: z.number().nullable(),
  searches_per_month: z.number().nullable().describe('null: unlimited'),
  plan_searches_left: z.number().nullable(),
  extra_credits: z.number(),
  total_searches_left: z.number().nullable(),
  this_month_usage: z.number(),
  this_hour_searches: z.number(),
  last_hour_searches: z.number(),
  account_rate_limit_per_hour: z.number(),
  plan_renewal_date: z.string(),
});

export const CompatLocation = z.object({
  id: z.string(),
  google_id: z.number(),
  google_parent_id: z.number().nullable(),
  name: z.string(),
  canonical_name: z.string(),
  country_code: z.string(),
  target_type: z.string(),
  reach: z
    .number()
    .describe(
      'people: the GeoNames population of a city, the sum of its cities for a region or country; 0 when unknown',
    ),
});
