import t from 'tap';
import { SearchRequest } from '../../contracts/search.js';
import type { JobStatusDoc } from '../../projections/jobStatus/jobStatus.js';
import type { SearchResultDoc } from '../../projections/searchResults/searchResults.js';
import { nativeResult } from '../../services/answers/native.js';
import { renderJob } from '../../services/answers/render.js';

const at = '2026-11-21T10:00:00.000Z';
const job = (request: Record<string, unknown>): JobStatusDoc => ({
  jobId: '0123456789abcdef01234567',
  keyId: 'k1',
  status: 'done',
  cached: false,
  request: SearchRequest.parse(request),
  cacheKey: 'c',
  month: '202611',
  charged: true,
  submittedAt: at,
  updatedAt: at,
  attempts: 1,
});
const item = (i: number) => ({ position: i + 1, title: `t${i}`, link: `https://example.com/${i}` });
const doc = (organic: number, news: number): SearchResultDoc => ({
  jobId: '0123456789abcdef01234567',
  status: 'done',
  result: {
    organic_results: Array.from({ length: organic }, (_, i) => item(i)),
    serp_features: {
      related_searches: [{ query: 'x' }],
      ...(news ? { news_results: Array.from({ length: news }, (_, i) => item(i)) } : {}),
    },
    information: {},
  } as unknown as SearchResultDoc['result'],
  pages: [],
  rawHtmlRef: { key: 'raw/x.html', sha256: 'x', bytes: 1 },
  parserVersion: '1.4.0',
  depth: 100,
  exhausted: false,
  completedAt: at,
});

t.test('nativeResult › start pages through the ranked list, ten at a time', async (t) => {
  const web = nativeResult(job({ keyword: 'coffee' }), doc(25, 0), 20);
  t.same(
    web.organic_results.map((r) => r.position),
    [21, 22, 23, 24, 25],
  );
  t.same(web.serp_features.related_searches, [{ query: 'x' }], 'features are whole on every page');
  t.equal(nativeResult(job({ keyword: 'coffee' }), doc(25, 0)).organic_results.length, 25, 'no start: all');

  const news = nativeResult(job({ keyword: 'coffee', tbm: 'nws' }), doc(0, 30), 10);
  t.same(
    (news.serp_features.news_results as { position: number }[]).map((r) => r.position),
    [11, 12, 13, 14, 15, 16, 17, 18, 19, 20],
    'a news tab pages through its articles',
  );
});

t.test('nativeResult › a search answered from a deeper crawl gets the top `depth` of it', async (t) => {
  const cached = { ...job({ keyword: 'coffee', depth: 10 }), cached: true, sourceJobId: 'fedcba9876543210fedcba98' };
  const shallow = nativeResult(cached, doc(95, 0));
  t.same(
    shallow.organic_results.map((r) => r.position),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  );
  t.equal(shallow.search_metadata.parameters.depth, 10, 'depth is echoed in search_metadata.parameters');
  t.equal(nativeResult(job({ keyword: 'coffee' }), doc(95, 0)).organic_results.length, 95, 'default depth: 100');
  const old = { ...job({ keyword: 'coffee' }), request: { keyword: 'coffee' } as JobStatusDoc['request'] };
  t.equal(nativeResult(old, doc(95, 0)).search_metadata.parameters.depth, 100, 'a job from before depth: 100');
});

t.test(
  'renderJob › the default output (an html link) only asks whether the result exists, never reads it',
  async (t) => {
    const reads: string[] = [];
    let projected = false;
    const deps = {
      linkSecret: 'link-secret-0123',
      presignTtlS: 60,
      resultOf: () => {
        reads.push('resultOf');
        return projected ? doc(3, 0) : undefined;
      },
      hasResult: () => {
        reads.push('hasResult');
        return projected;
      },
    };
    const j = job({ keyword: 'coffee' });
    const options = { baseUrl: 'http://127.0.0.1:1' };
    t.same(
      renderJob(deps, j, 'html', options),
      { status: 202, body: { job_id: j.jobId, status: 'running' } },
      'not projected yet: running',
    );
    projected = true;
    const html = renderJob(deps, j, 'html', options);
    t.match(html, { status: 200, body: { job_id: j.jobId, html_url: /\/raw\/0123456789abcdef01234567\?expires=/ } });
    t.same(reads, ['hasResult', 'hasResult'], 'html polls never read the result document');
    const json = renderJob(deps, j, 'json', options);
    t.ok('json' in json && JSON.parse(json.json.toString()).organic_results.length === 3, 'json reads and renders it');
    t.same(reads.slice(2), ['resultOf']);
  },
);
