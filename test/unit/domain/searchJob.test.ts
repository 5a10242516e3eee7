import t from 'tap';
import { DomainEvent } from '../../../contracts/events.js';
import { SerpResult } from '../../../contracts/result.js';
import type { SearchRequest } from '../../../contracts/search.js';
import { deciderSpec } from '../../../domain/kernel/givenWhenThen.js';
import { type SearchJobCommand, type SearchJobEvent, searchJobDecider } from '../../../domain/searchJob/searchJob.js';
import { type JobStatusDoc, jobStatusProjection } from '../../../projections/jobStatus/jobStatus.js';
import type { ProjectedEvent } from '../../../projections/projection.js';
import { type SearchResultDoc, searchResultsProjection } from '../../../projections/searchResults/searchResults.js';
import { nativeResult } from '../../../services/answers/native.js';

const spec = deciderSpec(searchJobDecider);
const now = '2026-11-21T10:00:00.000Z';
const request = { keyword: 'coffee', device: 'desktop', capture_aio: true, no_cache: false } as SearchRequest;
const submission = { jobId: 'j1', keyId: 'k1', request, cacheKey: 'ck', month: '202611', now };
const submitted = (charged: boolean): SearchJobEvent => ({
  type: 'SearchSubmitted',
  data: { jobId: 'j1', keyId: 'k1', request, cacheKey: 'ck', charged, month: '202611', submittedAt: now },
});
const started: SearchJobEvent = {
  type: 'CrawlStarted',
  data: { jobId: 'j1', attempt: 1, worker: 'w1', startedAt: now },
};
const serp = {
  organic_results: [{ position: 1, title: 'Coffee', link: 'https://example.com/' }],
  serp_features: {},
  information: {},
};
const reparsedRef = { key: 'results/j1.r1.json', sha256: 'z', bytes: 3 };
const complete: SearchJobCommand = {
  type: 'CompleteCrawl',
  jobId: 'j1',
  status: 'done',
  pages: [],
  resultRef: { key: 'results/j1.json', sha256: 'y', bytes: 2 },
  rawHtmlRef: { key: 'raw/j1.html', sha256: 'x', bytes: 1 },
  parserVersion: '1',
  blocks: 0,
  now,
};
const completed = searchJobDecider.decide(complete, { status: 'running', attempts: 1, cacheKey: 'ck', blobs: [] });
const fail = (final: boolean) =>
  ({ type: 'FailCrawl', jobId: 'j1', attempt: 1, reason: 'blocked', final, now }) as const;

t.test('SearchJob › submit', async (t) => {
  t.same(spec.given([]).when({ type: 'SubmitSearch', ...submission }), [submitted(true)]);
  t.same(
    spec.given([submitted(true)]).when({ type: 'SubmitSearch', ...submission }),
    [],
    'a retried submit is a no-op',
  );
  t.equal(spec.given([submitted(true)]).state().status, 'queued');
});

t.test('SearchJob › answered from cache › is done at once and not charged', async (t) => {
  const events = spec.given([]).when({ type: 'AnswerFromCache', sourceJobId: 'j0', ...submission });
  t.same(events, [
    submitted(false),
    { type: 'SearchAnsweredFromCache', data: { jobId: 'j1', sourceJobId: 'j0', answeredAt: now } },
  ]);
  t.same(spec.given(events).state().status, 'done');
  t.same(spec.given(events).when({ type: 'StartCrawl', jobId: 'j1', attempt: 1, worker: 'w', now }), []);
});

t.test('SearchJob › when queued › a crawl starts it running', async (t) => {
  t.same(spec.given([submitted(true)]).when({ type: 'StartCrawl', jobId: 'j1', attempt: 1, worker: 'w1', now }), [
    started,
  ]);
  t.equal(spec.given([submitted(true), started]).state().status, 'running');
});

t.test('SearchJob › when running', async (t) => {
  t.test('completes with the result and the cache key', async (t) => {
    const events = spec.given([submitted(true), started]).when(complete);
    t.equal(events.length, 1);
    t.match(events[0], {
      type: 'CrawlCompleted',
      data: { status: 'done', cacheKey: 'ck', resultRef: { key: 'results/j1.json' } },
    });
    t.notOk('result' in (events[0]?.data ?? {}), 'the result is in the blob store, not the event');
    t.equal(spec.given([submitted(true), started, ...events]).state().status, 'done');
  });
  t.test('a non-final failure keeps it running for a retry', async (t) => {
    const events = spec.given([submitted(true), started]).when(fail(false));
    t.equal(spec.given([submitted(true), started, ...events]).state().status, 'running');
  });
  t.test('a final failure ends it failed with the reason', async (t) => {
    const events = spec.given([submitted(true), started]).when(fail(true));
    t.match(spec.given([submitted(true), started, ...events]).state(), { status: 'failed', failure: 'blocked' });
  });
});

t.test('SearchJob › targeting used', async (t) => {
  const targeting = {
    location: 'Austin,Texas,United States',
    gl: 'us',
    hl: 'en',
    uule: 'w+CAIQICIaQXVzdGluLFRleGFzLFVuaXRlZCBTdGF0ZXM=',
    googleDomain: 'google.com',
    device: 'mobile',
  };
  const project = (events: SearchJobEvent[]) => {
    let job: JobStatusDoc | undefined;
    let doc: SearchResultDoc | undefined;
    events.forEach((e, i) => {
      // through the event contract, as the store reads them back; the projector fills a referenced result
      const stored = JSON.parse(JSON.stringify(e));
      if (stored.data.resultRef && !stored.data.result) stored.data.result = serp;
      const parsed = DomainEvent.parse(stored);
      const projected = {
        ...parsed,
        streamName: 'searchJob-j1',
        globalPosition: i + 1,
        recordedAt: now,
      } as ProjectedEvent;
      job = jobStatusProjection.evolve(job, projected) ?? undefined;
      if (searchResultsProjection.idOf(projected)) doc = searchResultsProjection.evolve(doc, projected) ?? undefined;
    });
    if (!job || !doc) throw new Error('nothing projected');
    return SerpResult.parse(nativeResult(job, doc)).search_metadata;
  };

  t.test('CompleteCrawl carries it into CrawlCompleted, and the result shows it', async (t) => {
    const events = spec.given([submitted(true), started]).when({ ...complete, targeting });
    t.same(events[0]?.type === 'CrawlCompleted' && events[0].data.targeting, targeting);
    t.same(project([submitted(true), started, ...events]).targeting, {
      location: 'Austin,Texas,United States',
      gl: 'us',
      hl: 'en',
      uule: 'w+CAIQICIaQXVzdGluLFRleGFzLFVuaXRlZCBTdGF0ZXM=',
      google_domain: 'google.com',
      device: 'mobile',
    });
  });

  t.test('a re-parse keeps it', async (t) => {
    const events = [
      submitted(true),
      started,
      ...spec.given([submitted(true), started]).when({ ...complete, targeting }),
    ];
    const reparsed = spec
      .given(events)
      .when({ type: 'ReparseSearch', jobId: 'j1', parserVersion: '2', resultRef: reparsedRef, now });
    t.match(project([...events, ...reparsed]), { parser_version: '2', targeting: { gl: 'us', device: 'mobile' } });
  });

  t.test('an event recorded before it existed still projects and renders, without it', async (t) => {
    t.notOk('targeting' in (completed[0]?.data ?? {}), 'no targeting key when the crawl gave none');
    const metadata = project([submitted(true), started, ...completed]);
    t.notOk('targeting' in metadata);
    t.match(metadata, { id: 'j1', status: 'done', pages_fetched: 0, parser_version: '1' });
  });
});

t.test('SearchJob › when terminal › ignores redelivered work', async (t) => {
  const done = [submitted(true), started, ...completed];
  t.same(spec.given(done).when(complete), [], 'a redelivered result');
  t.same(spec.given(done).when({ type: 'StartCrawl', jobId: 'j1', attempt: 2, worker: 'w2', now }), []);
  t.same(spec.given(done).when(fail(true)), [], 'a late failure cannot undo a result');
  const failed = [submitted(true), started, ...spec.given([submitted(true), started]).when(fail(true))];
  t.same(spec.given(failed).when(complete), [], 'a failed job stays failed');
});

t.test('SearchJob › unknown job › refuses crawl commands', async (t) => {
  t.throws(() => spec.given([]).when({ type: 'StartCrawl', jobId: 'j1', attempt: 1, worker: 'w', now }), {
    code: 'SERP_JOB_NOT_FOUND',
  });
});

t.test('SearchJob › reparse', async (t) => {
  const done = [submitted(true), started, ...completed];
  const cmd = { type: 'ReparseSearch', jobId: 'j1', parserVersion: '2', resultRef: reparsedRef, now } as const;
  t.same(spec.given(done).when(cmd), [
    { type: 'SearchReparsed', data: { jobId: 'j1', parserVersion: '2', resultRef: reparsedRef, reparsedAt: now } },
  ]);
  t.throws(() => spec.given([submitted(true)]).when(cmd), { code: 'SERP_JOB_NOT_TERMINAL' });
});

t.test('SearchJob › purge', async (t) => {
  const purge = { type: 'PurgeSearch', jobId: 'j1', now } as const;
  const done = [submitted(true), started, ...completed];
  const reparsed = spec
    .given(done)
    .when({ type: 'ReparseSearch', jobId: 'j1', parserVersion: '2', resultRef: reparsedRef, now });
  t.same(
    spec.given([...done, ...reparsed]).when(purge),
    [
      {
        type: 'SearchPurged',
        data: {
          jobId: 'j1',
          cacheKey: 'ck',
          blobs: ['raw/j1.html', 'results/j1.json', 'results/j1.r1.json'],
          purgedAt: now,
        },
      },
    ],
    'names every blob of the job: raw HTML, the crawl result and each re-parse',
  );
  const purged = [...done, ...spec.given(done).when(purge)];
  t.same(spec.given(purged).when(purge), [], 'purged once');
  t.match(spec.given(purged).state(), { status: 'done', purgedAt: now });
  t.throws(
    () =>
      spec.given(purged).when({ type: 'ReparseSearch', jobId: 'j1', parserVersion: '3', resultRef: reparsedRef, now }),
    { code: 'SERP_JOB_NOT_TERMINAL' },
    'a purged job has nothing to re-parse',
  );
  t.same(spec.given([submitted(true), started]).when(purge), [], 'a running job is never purged');
  t.throws(() => spec.given([]).when(purge), { code: 'SERP_JOB_NOT_FOUND' });
});
