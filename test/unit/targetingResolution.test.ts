import t from 'tap';
import type { SearchRequest } from '../../contracts/search.js';
import {
  CrawlAbortedError,
  CrawlBlockedError,
  CrawlRequestError,
  CrawlTransientError,
} from '../../services/crawler/errors.js';
import {
  fromThrownError,
  resolutionOf,
  resolvedTargetings,
  toThrownError,
} from '../../services/threads/pipelineThread.js';

/**
 * A location resolved on one thread and read back on the thread that crawls (the pipeline thread):
 * a known one arrives as its targeting, an unknown one as the same bad-request error, and any other failure is thrown
 * where it happened, so that crawl fails there and the queue retries it instead of failing it for good.
 */
const request = (location?: string) => ({ keyword: 'coffee', ...(location ? { location } : {}) }) as SearchRequest;

t.test('resolutionOf and resolvedTargetings: the location crosses threads as it was resolved', async (t) => {
  const resolve = (r: SearchRequest) => {
    if (r.location === 'Nowhere') throw new CrawlRequestError('unknown location "Nowhere"', 'unknown_location');
    if (r.location === 'Broken') throw new Error('index unavailable');
    return r.location ? { location: r.location, gl: 'us', hl: 'en', uule: 'w+x' } : {};
  };
  const there = resolvedTargetings();

  const known = request('Austin, Texas, United States');
  const resolution = resolutionOf(resolve, known);
  t.same(resolution, { ok: true, targeting: resolve(known) });
  // what postMessage delivers is a copy: the thread keys it by the request object it received
  const received = structuredClone(known);
  there.set(received, structuredClone(resolution));
  t.same(there.resolveTargeting(received), resolve(known), 'read back as resolved');

  const unknown = request('Nowhere');
  const refused = resolutionOf(resolve, unknown);
  t.same(refused, { ok: false, message: 'unknown location "Nowhere"', kind: 'unknown_location' });
  there.set(unknown, refused);
  t.throws(() => there.resolveTargeting(unknown), CrawlRequestError, 'the same bad request on the crawling thread');

  t.throws(() => resolutionOf(resolve, request('Broken')), /index unavailable/, 'any other error is thrown here');
  t.same(there.resolveTargeting(request()), {}, 'a request never resolved (no resolver): no targeting');
});

t.test('errors cross the thread boundary as the classes the crawl worker tells apart', async (t) => {
  const round = (e: Error) => fromThrownError(toThrownError(e));
  const blocked = round(new CrawlBlockedError('captcha', 'http://g/search', 429));
  t.ok(blocked instanceof CrawlBlockedError);
  t.match(blocked, { kind: 'captcha', url: 'http://g/search', status: 429, code: 'SERP_CRAWL_BLOCKED' });
  const transient = round(new CrawlTransientError('timeout', 'http://g/search', 'timed out after 5 s'));
  t.ok(transient instanceof CrawlTransientError);
  t.match(transient, { kind: 'timeout', message: 'timed out after 5 s', status: undefined });
  const request = round(new CrawlRequestError('HTTP 404 from Google', 'http_status', 404));
  t.ok(request instanceof CrawlRequestError);
  t.match(request, { kind: 'http_status', status: 404 });
  t.ok(round(new CrawlAbortedError()) instanceof CrawlAbortedError);
  const other = round(new TypeError('x is not a function'));
  t.equal(other.constructor, Error, 'anything else is a plain Error');
  t.equal(other.message, 'x is not a function');
});
