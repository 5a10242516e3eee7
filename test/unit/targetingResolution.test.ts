import t from 'tap';
import type { SearchRequest } from '../../contracts/search.js';
import { resolutionOf, resolvedTargetings } from '../../services/compose/crawlThread.js';
import { CrawlRequestError } from '../../services/crawler/errors.js';

/**
 * A location resolved on one thread and read back on the thread that crawls (the crawl thread, the pipeline thread):
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
