import t from 'tap';
import {
  CrawlBlockedError,
  CrawlRequestError,
  CrawlTransientError,
  describeError,
  publicFailureDetail,
} from '../../services/crawler/errors.js';

const origin = 'http://127.0.0.1:9';
const url = `${origin}/search?q=coffee&gl=us`;

t.test('publicFailureDetail: one fixed line by kind, nothing of the raw reason', async (t) => {
  const cases: Array<[string, string | undefined, RegExp]> = [
    [
      'captcha',
      describeError(new CrawlBlockedError('captcha', url, 429)),
      /^Google blocked every attempt to fetch this search \(CAPTCHA\); its quota was released\. Retry later\.$/,
    ],
    ['JS challenge', describeError(new CrawlBlockedError('js_challenge', url, 200)), /\(JavaScript challenge\)/],
    ['consent', describeError(new CrawlBlockedError('consent', url, 200)), /\(consent page\)/],
    ['429', describeError(new CrawlBlockedError('rate_limited', url, 429)), /blocked.*\(rate limited\)/],
    [
      'connection refused',
      describeError(
        new CrawlTransientError('network', url, 'fetch failed: ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9'),
      ),
      /^Google could not be reached; its quota was released\. Retry later\.$/,
    ],
    [
      'timeout',
      describeError(new CrawlTransientError('timeout', url, `timed out fetching ${url}`)),
      /^Google did not answer in time; /,
    ],
    [
      '5xx',
      describeError(new CrawlTransientError('server_error', url, 'Google answered HTTP 503', 503)),
      /server error \(HTTP 503\)/,
    ],
    [
      'error page',
      describeError(new CrawlTransientError('error_page', url, 'Google error page: something at 10.0.0.1', 200)),
      /^Google answered with an error page; /,
    ],
    [
      'unknown location',
      describeError(new CrawlRequestError('unknown location "Atlantis, Nowhere"')),
      /^Unknown location "Atlantis, Nowhere": /,
    ],
    [
      'bad engine_domain',
      describeError(new CrawlRequestError('engine_domain "example.com" is not a Google search domain')),
      /^engine_domain is not a Google search domain; /,
    ],
    [
      'a 4xx',
      describeError(new CrawlRequestError(`Google answered HTTP 404 for ${url}`)),
      /^Google refused this search \(HTTP 404\); /,
    ],
    ['unexpected', describeError(new Error(`boom at ${origin}`)), /^The search failed on an internal error; /],
    ['retries exhausted', 'gave up after 5 attempts', /^The search failed 5 times in a row; .*Retry later\.$/],
    ['no page', 'no page fetched', /^The search could not be completed; its quota was released\. Retry later\.$/],
    ['no reason', undefined, /^The search could not be completed; /],
    ['anything else', `proxy http://user:pw@proxy.internal:3128 died`, /^The search could not be completed; /],
  ];
  for (const [name, reason, expected] of cases) {
    const detail = publicFailureDetail(reason);
    t.match(detail, expected, `${name}: ${detail}`);
    t.notMatch(detail, /127\.0\.0\.1|10\.0\.0\.1|proxy\.internal|http:|SERP_CRAWL|ECONN|\n/, `${name}: no internals`);
  }
});
