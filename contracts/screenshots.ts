import { z } from 'zod';

/** Limits of a screenshot's size (docs/screenshots.md#screenshots). */
export const SCREENSHOT_WIDTH = { min: 320, max: 1920 } as const;
export const SCREENSHOT_SCALE = { min: 1, max: 3 } as const;

const flag = (name: string) =>
  z
    .enum(['0', '1', 'true', 'false'], { error: `${name} must be 1 or 0 (true or false)` })
    .transform((v) => v === '1' || v === 'true');

/** `GET /v1/search/{id}/screenshot`'s query (and the compat archive's `.png` / `.webp`). */
export const ScreenshotQuery = z.object({
  format: z
    .enum(['png', 'webp'], { error: 'format must be png or webp' })
    .optional()
    .describe('png or webp; without it the Accept header decides (image/webp, else PNG)'),
  viewport: flag('viewport').optional().describe('1: the first screen only; 0 (the default): the whole page'),
  width: z.coerce
    .number({ error: 'width must be a number of CSS pixels' })
    .int('width must be a whole number of CSS pixels')
    .min(SCREENSHOT_WIDTH.min, `width must be at least ${SCREENSHOT_WIDTH.min} CSS pixels`)
    .max(SCREENSHOT_WIDTH.max, `width must be at most ${SCREENSHOT_WIDTH.max} CSS pixels`)
    .optional()
    .describe("the page's width in CSS pixels (320 to 1920); the search's device's width by default"),
  scale: z.coerce
    .number({ error: 'scale must be a number' })
    .min(SCREENSHOT_SCALE.min, `scale must be at least ${SCREENSHOT_SCALE.min}`)
    .max(SCREENSHOT_SCALE.max, `scale must be at most ${SCREENSHOT_SCALE.max}`)
    .optional()
    .describe("device pixels per CSS pixel (1 to 3); the search's device's by default"),
});
export type ScreenshotQuery = z.infer<typeof ScreenshotQuery>;

/** Where an element lay on the rendered page, in CSS pixels from its top left corner. */
export const Rectangle = z.object({
  x: z.number().int(),
  y: z.number().int(),
  width: z.number().int(),
  height: z.number().int(),
});
export type Rectangle = z.infer<typeof Rectangle>;

/** `search_metadata.pixel_positions`: what the page was laid out in, and its feature blocks top to bottom. */
export const PixelPositionsMetadata = z.object({
  device: z.string(),
  viewport: z.object({ width: z.number().int(), height: z.number().int() }).describe('the first screen, CSS pixels'),
  page_height: z.number().int(),
  rendered_page: z
    .number()
    .int()
    .describe(
      'the page of the search whose whole layout (blocks, page_height) was measured: 1, what the searcher saw first',
    ),
  pages_laid_out: z
    .number()
    .int()
    .describe("the search's pages laid out: each later page's organic results stacked below the page before's"),
  blocks: z.array(
    z.object({
      type: z.string().describe('the feature: ads, related_questions, local_results, top_stories, ai_overview…'),
      rectangle: Rectangle.nullable(),
      pixels_from_top: z.number().int().nullable(),
      above_the_fold: z.boolean(),
    }),
  ),
});

/** `pixel_positions` on a fetch: a flag as the other query flags are */
export const PixelPositionsFlag = flag('pixel_positions');
