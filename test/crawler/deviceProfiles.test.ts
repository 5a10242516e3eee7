import zlib from 'node:zlib';
import t from 'tap';
import { acceptLanguage, deviceProfile, navigationHeaders } from '../../services/ports/devices.js';

/**
 * What a search's device looks like to Google (docs/api.md#submit, `device`): a desktop, phone or tablet Chrome, with the client
 * hints that Chrome sends alongside its user agent, in the language asked for; Google serves each its own layout.
 */
t.test('device profiles › each device its own Chrome', async (t) => {
  const desktop = deviceProfile('desktop');
  const mobile = deviceProfile('mobile');
  const tablet = deviceProfile('tablet');
  t.match(desktop, { isMobile: false, hasTouch: false, clientHints: { 'sec-ch-ua-platform': '"Windows"' } }, 'desktop');
  t.match(mobile.userAgent, / Mobile Safari\//, 'a phone says Mobile, which gets the mobile layout');
  t.notMatch(tablet.userAgent, / Mobile /, 'a tablet does not, which gets the tablet layout');
  t.match(mobile.clientHints, { 'sec-ch-ua-mobile': '?1' }, 'and the client hints agree with each user agent');
  t.match(tablet.clientHints, { 'sec-ch-ua-mobile': '?0', 'sec-ch-ua-platform': '"Android"' });
  for (const p of [desktop, mobile, tablet]) {
    const major = /Chrome\/(\d+)\./.exec(p.userAgent)?.[1];
    t.match(
      p.clientHints['sec-ch-ua'],
      `"Google Chrome";v="${major}"`,
      `${p.device}: the brands name the user agent’s Chrome`,
    );
  }
});

t.test('device profiles › a navigation’s headers', async (t) => {
  t.equal(acceptLanguage(undefined), 'en-US,en;q=0.9', 'no language: English');
  t.equal(acceptLanguage('de'), 'de,en;q=0.8', 'another language first, English after');
  const headers = navigationHeaders('mobile', 'UA', 'fr');
  t.match(
    headers,
    { 'user-agent': 'UA', 'accept-language': 'fr,en;q=0.8', 'sec-ch-ua-mobile': '?1', 'sec-fetch-mode': 'navigate' },
    'the session’s user agent, the language, the device’s hints',
  );
  t.same(
    Object.keys(headers).slice(0, 3),
    ['sec-ch-ua', 'sec-ch-ua-mobile', 'sec-ch-ua-platform'],
    'in Chrome’s order',
  );
  t.equal(
    headers['accept-encoding'].includes('zstd'),
    'createZstdDecompress' in zlib,
    'zstd only where this Node can decode it',
  );
});
