import type { SerpScreenshotInput, SerpScreenshotOutput } from '../../contracts/mcp.js';
import type { V1Client } from '../client/v1Client.js';

type Placed = {
  position: number;
  link?: string;
  rectangle: { x: number; y: number; width: number; height: number } | null;
  above_the_fold: boolean;
};

/** whether `link`'s host is `domain` or under it */
const onDomain = (link: string | undefined, domain: string): boolean => {
  try {
    const host = new URL(link ?? '').hostname.toLowerCase();
    return host === domain || host.endsWith(`.${domain}`);
  } catch {
    return false;
  }
};

/**
 * `serp_screenshot` (docs/mcp.md#tools): the first screen of a finished search as it was rendered from the stored page,
 * and the rectangles of the tracked domain's organic results (all of them without a domain), read through `/v1` like
 * every tool: the screenshot route and the result with `pixel_positions=1` (docs/screenshots.md).
 */
export const screenshotOf = async (
  client: V1Client,
  args: SerpScreenshotInput,
): Promise<{ image: Buffer; out: SerpScreenshotOutput }> => {
  const image = await client.firstScreen(args.job_id);
  const { body } = await client.positioned(args.job_id);
  const meta = body.search_metadata as { pixel_positions?: { viewport: { width: number; height: number } } };
  const organic = (body.organic_results as Placed[] | undefined) ?? [];
  const results = organic
    .filter((r) => !args.domain || onDomain(r.link, args.domain))
    .map(({ position, link, rectangle, above_the_fold }) => ({
      position,
      ...(link ? { link } : {}),
      rectangle: rectangle ?? null,
      above_the_fold,
    }));
  return {
    image,
    out: {
      job_id: args.job_id,
      viewport: meta.pixel_positions?.viewport ?? { width: 0, height: 0 },
      ...(args.domain ? { domain: args.domain } : {}),
      results,
    },
  };
};

/** the text beside the image: where each of the results lies */
export const screenshotText = (o: SerpScreenshotOutput): string => {
  const what = o.domain ? `${o.domain}'s results` : 'organic results';
  if (!o.results.length) return `The first screen (${o.viewport.width}×${o.viewport.height}); no ${what} on the page.`;
  const lines = o.results.map((r) =>
    r.rectangle
      ? `#${r.position} ${r.link ?? ''}: ${r.rectangle.y} px from the top, ${r.above_the_fold ? 'above' : 'below'} the fold`
      : `#${r.position} ${r.link ?? ''}: on a later page (not rendered)`,
  );
  return `The first screen (${o.viewport.width}×${o.viewport.height} CSS px); ${what}:\n${lines.join('\n')}`;
};
