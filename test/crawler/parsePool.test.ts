import t from 'tap';
import { parse } from '../../parser/index.js';
import { createParsePool, inlineParser } from '../../services/crawler/parsePool.js';
import { DEFAULT_PAGES } from '../support/fakeGoogle.js';
import { fixturesMissing, readFixtureText } from '../support/fixtures.js';

t.test(
  'the parse pool reads pages in worker threads exactly as the event loop does',
  { skip: fixturesMissing() },
  async (t) => {
    const pool = createParsePool(2);
    t.teardown(() => pool.close());
    const pages = DEFAULT_PAGES.slice(0, 4).map((p) => readFixtureText(p));
    const context = { captureAio: true, start: 0, device: 'desktop' as const, status: 200 };
    const fromPool = await Promise.all(pages.map((html) => pool.parse(html, context)));
    t.same(
      fromPool,
      pages.map((html) => parse(html, context)),
      'the same outcome, page for page',
    );
    t.equal(fromPool[0]?.kind, 'serp');
    t.same(await inlineParser.parse(pages[0]!, context), fromPool[0], 'the inline parser agrees');
    const block = await pool.parse('<html><body><form action="/sorry/index">captcha</form></body></html>', context);
    t.not(block.kind, 'serp', 'an interstitial comes back as its kind, not as an empty result');
  },
);
