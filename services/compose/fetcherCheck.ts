import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { processEnv } from '../config/env.js';
import type { FetcherMode } from '../crawler/crawl.js';

export interface FetcherChoice {
  fetcher: FetcherMode;
  chromiumPath?: string;
  /** one line for the operator when the choice differs from the configuration */
  warning?: string;
}

const executable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** SERP_CHROMIUM_PATH, else Debian's /usr/bin/chromium, else a Chromium or Chrome on PATH. */
export const findChromium = (configured: string | undefined, path = processEnv().PATH ?? ''): string | undefined => {
  if (configured) return executable(configured) ? configured : undefined;
  if (executable('/usr/bin/chromium')) return '/usr/bin/chromium';
  for (const dir of path.split(delimiter).filter(Boolean)) {
    for (const name of ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable']) {
      if (executable(join(dir, name))) return join(dir, name);
    }
  }
  return undefined;
};

const HOW = 'install it (Debian: apt-get install chromium) or set SERP_CHROMIUM_PATH';

/**
 * What the configured fetcher needs, checked at start (docs/operations.md#which-fetcher): a missing browser is a
 * configuration problem the operator hears about once, never a crawl failure recorded against a user's job. `auto`
 * falls back to `http`; `browser` cannot run and refuses to start.
 */
export const chooseFetcher = (
  configured: FetcherMode,
  chromiumPath: string | undefined,
  find = findChromium,
): FetcherChoice => {
  if (configured === 'http') return { fetcher: 'http' };
  const found = find(chromiumPath);
  if (found) return { fetcher: configured, chromiumPath: found };
  const where = chromiumPath ? `at SERP_CHROMIUM_PATH=${chromiumPath}` : 'at /usr/bin/chromium or on PATH';
  if (configured === 'browser') {
    throw new Error(`SERP_FETCHER=browser needs Chromium, which is not ${where}: ${HOW}, or use SERP_FETCHER=http`);
  }
  return {
    fetcher: 'http',
    warning: `Chromium not found ${where}: SERP_FETCHER=auto falls back to http (no browser sessions, no AI Overviews that stream in after load); ${HOW}`,
  };
};
