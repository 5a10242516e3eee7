import { findChromium } from '../../services/compose/fetcherCheck.js';
import { loadConfig } from '../../services/config/config.js';

/**
 * The Chromium the service would start, found the way its configuration finds it: SERP_CHROMIUM_PATH, else
 * /usr/bin/chromium, else a Chromium or Chrome on PATH (docs/testing.md).
 */
export const chromiumPath: string | undefined = findChromium(loadConfig(process.env).chromiumPath);

/**
 * Why the browser tests cannot run here, or undefined when they can. Under CI=true a missing Chromium throws: CI
 * installs one, so a skip there would hide a broken install.
 */
export const chromiumMissing = (): string | undefined => {
  if (chromiumPath) return undefined;
  const reason = 'no Chromium at SERP_CHROMIUM_PATH, /usr/bin/chromium or on PATH (apt-get install chromium)';
  if (process.env.CI === 'true') throw new Error(`${reason}: CI requires it`);
  return reason;
};
