import type { Config } from '../config/config.js';
import type { PageRenderer } from '../render/pageRenderer.js';
import { createRenderThread } from '../threads/renderThread.js';
import { findChromium } from './fetcherCheck.js';

/**
 * Renders run at the lowest priority, below the crawler's threads (nice 10, which crawl and parse live searches) as
 * well as the event loop: a render is never what a live search waits for (docs/screenshots.md#its-own-lane).
 */
export const RENDER_NICE = 19;

/**
 * The renderer of stored pages for the process that answers HTTP (docs/screenshots.md#its-own-lane): undefined when
 * renders are off (SERP_RENDER_CONCURRENCY=0) or no Chromium is found, and screenshots then answer 503. It runs on a
 * thread of its own, started with its Chromium at the first render, so a service nobody asks for screenshots starts
 * neither.
 */
export const composeRenderer = (
  config: Pick<Config, 'chromiumPath' | 'renderConcurrency' | 'renderQueue' | 'renderDeadlineMs'>,
): PageRenderer | undefined => {
  if (config.renderConcurrency === 0) return undefined;
  const executablePath = findChromium(config.chromiumPath);
  if (!executablePath) return undefined;
  return createRenderThread({
    executablePath,
    concurrency: config.renderConcurrency,
    queue: config.renderQueue,
    deadlineMs: config.renderDeadlineMs,
    nice: RENDER_NICE,
  });
};
