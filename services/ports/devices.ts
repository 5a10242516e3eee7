import zlib from 'node:zlib';
import type { Device } from '../../contracts/search.js';

/**
 * What each device looks like to Google: the user agent, the matching client hints (Chrome sends them on every
 * navigation to a Google origin, and a UA without them is an easy bot signal) and the viewport the browser emulates.
 */
export interface DeviceProfile {
  device: Device;
  userAgent: string;
  clientHints: Record<string, string>;
  viewport: { width: number; height: number };
  deviceScaleFactor: number;
  isMobile: boolean;
  hasTouch: boolean;
}

const CHROME_MAJOR = '142';
const brands = `"Chromium";v="${CHROME_MAJOR}", "Google Chrome";v="${CHROME_MAJOR}", "Not_A Brand";v="99"`;

const profiles: Record<Device, DeviceProfile> = {
  desktop: {
    device: 'desktop',
    userAgent: `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${CHROME_MAJOR}.0.0.0 Safari/537.36`,
    clientHints: { 'sec-ch-ua': brands, 'sec-ch-ua-mobile': '?0', 'sec-ch-ua-platform': '"Windows"' },
    viewport: { width: 1366, height: 768 },
    deviceScaleFactor: 1,
    isMobile: false,
    hasTouch: false,
  },
  mobile: {
    device: 'mobile',
    userAgent: `Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${CHROME_MAJOR}.0.0.0 Mobile Safari/537.36`,
    clientHints: { 'sec-ch-ua': brands, 'sec-ch-ua-mobile': '?1', 'sec-ch-ua-platform': '"Android"' },
    viewport: { width: 412, height: 915 },
    deviceScaleFactor: 2.625,
    isMobile: true,
    hasTouch: true,
  },
  // Android tablets send Chrome's UA without "Mobile", which is what makes Google serve its tablet layout
  tablet: {
    device: 'tablet',
    userAgent: `Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${CHROME_MAJOR}.0.0.0 Safari/537.36`,
    clientHints: { 'sec-ch-ua': brands, 'sec-ch-ua-mobile': '?0', 'sec-ch-ua-platform': '"Android"' },
    viewport: { width: 800, height: 1280 },
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
  },
};

export const deviceProfile = (device: Device): DeviceProfile => profiles[device];

/** Accept-Language as Chrome builds it from the interface language: `hl`, then English as fallback. */
export const acceptLanguage = (hl: string | undefined): string => {
  if (!hl || hl === 'en') return 'en-US,en;q=0.9';
  return `${hl},en;q=0.8`;
};

/**
 * What the fetcher may be sent: Chrome's list, less zstd where this Node cannot decode it (its zlib has zstd from 22.15
 * on; docs/security.md#bodies-are-bounded-while-they-stream). Advertised anyway, a zstd answer would reach the parser
 * still compressed and be read as a page of noise.
 */
export const ACCEPT_ENCODING =
  typeof (zlib as unknown as { createZstdDecompress?: unknown }).createZstdDecompress === 'function'
    ? 'gzip, deflate, br, zstd'
    : 'gzip, deflate, br';

/** The navigation headers Chrome sends for a top-level GET, in Chrome's order. */
export const navigationHeaders = (
  device: Device,
  userAgent: string,
  hl: string | undefined,
): Record<string, string> => {
  const p = deviceProfile(device);
  return {
    ...p.clientHints,
    'upgrade-insecure-requests': '1',
    'user-agent': userAgent,
    accept:
      'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7',
    'sec-fetch-site': 'none',
    'sec-fetch-mode': 'navigate',
    'sec-fetch-user': '?1',
    'sec-fetch-dest': 'document',
    'accept-encoding': ACCEPT_ENCODING,
    'accept-language': acceptLanguage(hl),
  };
};
