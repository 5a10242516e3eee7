import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Page } from 'playwright-core';
import type { Test } from 'tap';
import { findChromium } from '../../services/compose/fetcherCheck.js';
import { loadConfig } from '../../services/config/config.js';
import { CHROMIUM_LOOPBACK_ARG } from './loopback.js';

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

/**
 * The admin dashboard in Chromium, signed in with `token` as a user does (the sign-in form, then Enter), on a
 * 1280×900 page; the browser closes when `t` ends. For the tests that read one table of it.
 */
export const signedInDashboard = async (t: Test, base: string, token: string): Promise<Page> => {
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--no-sandbox', CHROMIUM_LOOPBACK_ARG],
  });
  t.teardown(() => browser.close());
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await page.goto(`${base}/admin`);
  await page.getByLabel('Admin token').fill(token);
  await page.keyboard.press('Enter');
  return page;
};

/**
 * A local origin that answers every request with `x` and records its path: what a render must never reach
 * (docs/screenshots.md#nothing-leaves-the-machine). It closes when `t` ends.
 */
export const watchedOrigin = async (t: Test): Promise<{ origin: string; hits: string[] }> => {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.end('x');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
};
