import t from 'tap';
import { parse } from '../../parser/index.js';
import type { JobStatusDoc } from '../../projections/jobStatus/jobStatus.js';
import type { SearchResultDoc } from '../../projections/searchResults/searchResults.js';
import { compatDone, compatResult } from '../../services/answers/compat.js';
import { nativeResult } from '../../services/answers/native.js';
import { buildTestApp } from '../support/app.js';
import { fixturesMissing, listSerpPages, readFixtureText } from '../support/fixtures.js';
import { createOpenApiValidator, type OpenApiDoc, responsePointer } from '../support/openapiValidator.js';

/**
 * Every fixture page's answers, as the renderers make them (output=json, output=compat on /v1, and compat /search),
 * validated against the schemas the service serves at /openapi.json: a property the documentation forbids
 * (`additionalProperties: false`) or a type it does not allow is a contract gap a generated client would trip on.
 */
const missing = fixturesMissing();

const job: JobStatusDoc = {
  jobId: '0193a1b2c3d4e5f6a7b8c9d0',
  keyId: 'k',
  status: 'done',
  cached: false,
  request: { keyword: 'coffee', location: 'Austin, TX', capture_aio: true } as JobStatusDoc['request'],
  cacheKey: 'c',
  month: '2026-01',
  charged: true,
  submittedAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:02.000Z',
  completedAt: '2026-01-01T00:00:02.000Z',
  attempts: 1,
};

const stored = (serp: SearchResultDoc['result']): SearchResultDoc => ({
  jobId: job.jobId,
  status: 'done',
  result: serp,
  pages: [
    {
      start: 0,
      url: 'https://www.google.com/search?q=coffee',
      status: 200,
      fetchedAt: job.updatedAt,
      organicCount: serp.organic_results.length,
      fetcher: 'http',
    },
  ],
  rawHtmlRef: { key: 'raw/x', sha256: 'x', bytes: 1 },
  parserVersion: 'x',
  depth: 100,
  exhausted: false,
  targeting: {
    location: 'Austin,Texas,United States',
    gl: 'us',
    hl: 'en',
    googleDomain: 'google.com',
    device: 'desktop',
  },
  completedAt: job.updatedAt,
});

/** what goes over the wire: JSON, so `undefined` members are gone as they are for a client */
const wire = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

t.test('every fixture page, rendered, matches the served schemas', { skip: missing }, async (t) => {
  const { app } = await buildTestApp(t);
  const doc = JSON.parse((await app.inject({ url: '/openapi.json' })).body) as OpenApiDoc;
  const openapi = createOpenApiValidator(doc);
  const fetched = responsePointer('/v1/search/{job_id}', 'get', '200', 'application/json');
  const native = openapi.branch(fetched, 'output=json: the native schema');
  const compat = openapi.branch(fetched, "output=compat: SerpApi's names and envelope");
  const search = responsePointer('/search', 'get', '200', 'application/json');
  const links = { linkSecret: 's'.repeat(32), presignTtlS: 600, baseUrl: 'http://127.0.0.1:1' };

  const problems: string[] = [];
  let pages = 0;
  for (const page of listSerpPages()) {
    const out = parse(readFixtureText(page), { captureAio: true });
    if (out.kind !== 'serp') continue;
    pages++;
    const doc = stored(out.serp);
    const json = wire(nativeResult(job, doc)) as ReturnType<typeof nativeResult>;
    const answers: Array<[string, string, unknown]> = [
      ['output=json', native, json],
      ['output=compat', compat, wire(compatResult(json))],
      [
        'compat /search',
        search,
        wire(compatDone(job, doc, { ...links, query: { engine: 'google', q: 'coffee' } }, { start: 0, num: 10 })),
      ],
    ];
    for (const [what, pointer, value] of answers) {
      for (const e of openapi.validate(pointer, value)) problems.push(`${page} ${what}: ${e}`);
    }
  }
  t.ok(pages > 80, `${pages} SERP pages rendered`);
  const kinds = [...new Set(problems.map((p) => p.replace(/^\S+ /, '')))];
  t.same(kinds.slice(0, 60), [], `${problems.length} schema violations`);
});
