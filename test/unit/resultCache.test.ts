import t from 'tap';
import { DomainEvent } from '../../contracts/events.js';
import { SearchRequest } from '../../contracts/search.js';
import { deciderSpec } from '../../domain/kernel/givenWhenThen.js';
import { searchJobDecider } from '../../domain/searchJob/searchJob.js';
import type { ProjectedEvent } from '../../projections/projection.js';
import { cachedAnswer, type ResultCacheDoc, resultCacheProjection } from '../../projections/resultCache/resultCache.js';

const at = (minute: number) => new Date(Date.UTC(2026, 10, 21, 10, minute)).toISOString();
let position = 0;
/** a CrawlCompleted as the store reads it back (through the event contract) */
const completed = (jobId: string, minute: number, data: Record<string, unknown>): ProjectedEvent => {
  position += 1;
  const parsed = DomainEvent.parse({
    type: 'CrawlCompleted',
    data: {
      jobId,
      status: 'done',
      pages: [],
      rawHtmlRef: { key: `raw/${jobId}.html`, sha256: 'x', bytes: 1 },
      parserVersion: '1',
      cacheKey: 'ck',
      blocks: 0,
      completedAt: at(minute),
      ...data,
    },
  });
  return { ...parsed, streamName: `searchJob-${jobId}`, globalPosition: position, recordedAt: at(minute) };
};
const fold = (events: ProjectedEvent[]) =>
  events.reduce<ResultCacheDoc | undefined>((doc, e) => resultCacheProjection.evolve(doc, e) ?? undefined, undefined);
const now = new Date(at(30));
const ttl = 3600;

t.test('resultCache › answers a search from a crawl at least as deep, never a shallower one', async (t) => {
  const doc = fold([completed('deep', 0, { depth: 100, exhausted: false }), completed('ten', 5, { depth: 10 })]);
  t.same(
    doc?.entries.map((e) => [e.jobId, e.covers]),
    [
      ['deep', 100],
      ['ten', 10],
    ],
    'the older deep one stays beside the newer shallow one',
  );
  t.equal(cachedAnswer(doc!, 10, now, ttl)?.jobId, 'ten', 'the newest deep enough');
  t.equal(cachedAnswer(doc!, 30, now, ttl)?.jobId, 'deep', 'depth 30: only the deep one reaches');
  const later = fold([completed('ten', 0, { depth: 10 })]);
  t.equal(cachedAnswer(later!, 30, now, ttl), undefined, 'a depth-10 crawl never answers depth 30');
  const hourLater = new Date(Date.parse(at(0)) + 3_600_000);
  t.equal(cachedAnswer(doc!, 100, hourLater, ttl), undefined, 'past the TTL: no answer');
});

t.test('resultCache › a newer crawl at least as deep replaces the older ones it beats', async (t) => {
  const doc = fold([
    completed('a', 0, { depth: 10 }),
    completed('b', 1, { depth: 30 }),
    completed('c', 2, { depth: 30 }),
  ]);
  t.same(
    doc?.entries.map((e) => e.jobId),
    ['c'],
  );
});

t.test('resultCache › a crawl that ended before its depth covers every depth', async (t) => {
  const last = fold([completed('last', 0, { depth: 30, exhausted: true })]);
  t.equal(cachedAnswer(last!, 100, now, ttl)?.jobId, 'last', 'the last page reached: all Google had');
  const old = fold([completed('old', 0, {})]);
  t.same(old?.entries[0]?.covers, 100, 'an event from before depth: a top-100 crawl');
});

t.test('resultCache › a purged job answers no one', async (t) => {
  const doc = fold([completed('deep', 0, { depth: 100 }), completed('ten', 5, { depth: 10 })]);
  const purge = (jobId: string): ProjectedEvent => ({
    ...DomainEvent.parse({ type: 'SearchPurged', data: { jobId, cacheKey: 'ck', blobs: [], purgedAt: at(9) } }),
    streamName: `searchJob-${jobId}`,
    globalPosition: 99,
    recordedAt: at(9),
  });
  const once = resultCacheProjection.evolve(doc, purge('deep'));
  t.same(
    once?.entries.map((e) => e.jobId),
    ['ten'],
  );
  t.equal(resultCacheProjection.evolve(once ?? undefined, purge('ten')), null, 'the last one gone: no document');
});

t.test('SearchJob › CrawlCompleted records the depth asked and whether the crawl ran out first', async (t) => {
  const spec = deciderSpec(searchJobDecider);
  const submitted = (request: Record<string, unknown>) => ({
    type: 'SearchSubmitted' as const,
    data: {
      jobId: 'j1',
      keyId: 'k1',
      request: SearchRequest.parse({ keyword: 'coffee', ...request }),
      cacheKey: 'ck',
      charged: true,
      month: '202611',
      submittedAt: at(0),
    },
  });
  const complete = {
    type: 'CompleteCrawl' as const,
    jobId: 'j1',
    status: 'done' as const,
    pages: [],
    resultRef: { key: 'results/j1.json', sha256: 'y', bytes: 2 },
    rawHtmlRef: { key: 'raw/j1.html', sha256: 'x', bytes: 1 },
    parserVersion: '1',
    blocks: 0,
    now: at(1),
  };
  t.match(spec.given([submitted({ depth: 20 })]).when({ ...complete, exhausted: true }), [
    { type: 'CrawlCompleted', data: { depth: 20, exhausted: true } },
  ]);
  t.match(spec.given([submitted({})]).when(complete), [
    { type: 'CrawlCompleted', data: { depth: 100, exhausted: false } },
  ]);
  // a job submitted before depth existed: its request has none, and was crawled for the top 100
  const old = submitted({});
  delete (old.data.request as { depth?: number }).depth;
  t.match(spec.given([old]).when(complete), [{ type: 'CrawlCompleted', data: { depth: 100 } }]);
});
