import { z } from 'zod';

/**
 * SerpApi's envelope as the compat answers carry it (docs/serpapi-reference.md §2), for documentation and generated
 * clients: the named blocks are typed, and each SERP feature (`related_questions`, `top_stories`, …) comes at the top
 * level under its own name. Answers are sent pre-serialised, so this schema never re-validates a result.
 */
export const CompatResult = z
  .object({
    search_metadata: z
      .object({
        id: z.string().describe('24 hex characters: the job id'),
        status: z.enum(['Processing', 'Queued', 'Success', 'Error']),
        json_endpoint: z.string().optional(),
        raw_html_file: z.string().optional(),
        created_at: z.string().describe('YYYY-MM-DD HH:MM:SS UTC'),
        processed_at: z.string().optional(),
        google_url: z.string().optional(),
        total_time_taken: z.number().optional(),
      })
      .catchall(z.unknown()),
    search_parameters: z.record(z.string(), z.unknown()).optional(),
    search_information: z.record(z.string(), z.unknown()).optional(),
    organic_results: z.array(z.record(z.string(), z.unknown())).optional(),
    ai_overview: z.record(z.string(), z.unknown()).optional(),
    error: z.string().optional().describe('why there are no results (a failed or empty search)'),
  })
  .describe("SerpApi's names and envelope; each SERP feature comes at the top level under its own name");
export type CompatResult = z.infer<typeof CompatResult>;
