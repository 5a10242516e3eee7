import t from 'tap';
import type { CrawlFailure } from '../../contracts/events.js';
import { SearchRequest } from '../../contracts/search.js';
import { publicFailureDetail } from '../../services/answers/publicFailure.js';
import {
  CrawlBlockedError,
  CrawlRequestError,
  CrawlTransientError,
  describeError,
  failureOf,
} from '../../services/crawler/errors.js';

const origin = 'http://127.0.0.1:9';
const url = `${origin}/search?q=coffee&gl=us`;

const request = SearchRequest.parse({ keyword: 'coffee', location: 'Atlantis, Nowhere' });
/** What a failed job holds: the raw reason, and (events since CrawlFailed carried it) the failure's code. */
const failedJob = (reason: string | undefined, failure?: CrawlFailure) => ({
  detail: reason,
  request,
  ...(failure ? { failure } : {}),
});
const err = (e: Error) => ({ reason: describeError(e), failure: failureOf(e) });

t.test('publicFailureDetail: one fixed line by kind, nothing of the raw reason', async (t) => {
  const cases: Array<[string, string | { reason: string; failure: CrawlFailure } | undefined, RegExp]> = [
    [
      'captcha',
      err(new CrawlBlockedError('captcha', url, 429)),
      /^Google blocked every attempt to fetch this search \(CAPTCHA\); its quota was released\. Retry later\.$/,
    ],
    ['JS challenge', err(new CrawlBlockedError('js_challenge', url, 200)), /\(JavaScript challenge\)/],
    ['consent', err(new CrawlBlockedError('consent', url, 200)), /\(consent page\)/],
    ['429', err(new CrawlBlockedError('rate_limited', url, 429)), /blocked.*\(rate limited\)/],
    [
      'connection refused',
      err(new CrawlTransientError('network', url, 'fetch failed: ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9')),
      /^Google could not be reached; its quota was released\. Retry later\.$/,
    ],
    [
      'timeout',
      err(new CrawlTransientError('timeout', url, `timed out fetching ${url}`)),
      /^Google did not answer in time; /,
    ],
    [
      '5xx',
      err(new CrawlTransientError('server_error', url, 'Google answered HTTP 503', 503)),
      /server error \(HTTP 503\)/,
    ],
    [
      'error page',
      err(new CrawlTransientError('error_page', url, 'Google error page: something at 10.0.0.1', 200)),
      /^Google answered with an error page; /,
    ],
    [
      'unknown location',
      err(new CrawlRequestError('unknown location "Atlantis, Nowhere"', 'unknown_location')),
      /^Unknown location "Atlantis, Nowhere": /,
    ],
    [
      'bad engine_domain',
      err(new CrawlRequestError('engine_domain "example.com" is not a Google search domain', 'engine_domain')),
      /^engine_domain is not a Google search domain; /,
    ],
    [
      'a 4xx',
      err(new CrawlRequestError(`Google answered HTTP 404 for ${url}`, 'http_status', 404)),
      /^Google refused this search \(HTTP 404\); /,
    ],
    ['unexpected', err(new Error(`boom at ${origin}`)), /^The search failed on an internal error; /],
    ['retries exhausted', 'gave up after 5 attempts', /^The search failed 5 times in a row; .*Retry later\.$/],
    ['no page', 'no page fetched', /^The search could not be completed; its quota was released\. Retry later\.$/],
    ['no reason', undefined, /^The search could not be completed; /],
    ['anything else', `proxy http://user:pw@proxy.internal:3128 died`, /^The search could not be completed; /],
  ];
  const internals = /127\.0\.0\.1|10\.0\.0\.1|proxy\.internal|http:|SERP_CRAWL|ECONN|\n/;
  for (const [name, given, expected] of cases) {
    const reason = typeof given === 'object' ? given.reason : given;
    // events recorded before CrawlFailed carried its code hold the reason text alone
    const legacy = publicFailureDetail(failedJob(reason));
    t.match(legacy, expected, `${name} (reason text only): ${legacy}`);
    t.notMatch(legacy, internals, `${name} (reason text only): no internals`);
    if (typeof given === 'object') {
      const coded = publicFailureDetail(failedJob(reason, given.failure));
      t.equal(coded, legacy, `${name}: the failure's code gives the same line as its text`);
    }
  }
  t.match(
    publicFailureDetail(failedJob('gave up after 5 attempts', { code: 'SERP_CRAWL_EXHAUSTED', attempts: 5 })),
    /^The search failed 5 times in a row; /,
    'retries exhausted, with its code',
  );
});
