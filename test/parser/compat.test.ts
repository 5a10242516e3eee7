import t from 'tap';
import type { SerpResult } from '../../contracts/result.js';
import { toCompat } from '../../parser/index.js';

const result = (
  parameters: Record<string, unknown>,
  targeting?: SerpResult['search_metadata']['targeting'],
  serp_features: Record<string, unknown> = {},
): SerpResult => ({
  search_metadata: {
    id: '0123456789abcdef01234567',
    status: 'done',
    cached: false,
    created_at: '2026-01-02T03:04:05.678Z',
    ...(targeting ? { targeting } : {}),
    parameters,
    information: { total_results: 5 },
  },
  organic_results: [{ position: 1, title: 'A', link: 'https://a.example/', page: 1 }],
  serp_features,
});

t.test('compat › search_parameters in SerpApi’s names, filled from the targeting used', async (t) => {
  const out = toCompat(
    result(
      {
        keyword: 'coffee',
        location: 'Austin, Texas',
        device: 'mobile',
        engine_domain: 'google.co.uk',
        capture_aio: true,
        no_cache: false,
        stop_domain: 'example.com',
        tbs: 'qdr:d',
        safe: 'active',
        api_key: 'secret',
      },
      {
        location: 'Austin,Texas,United States',
        gl: 'us',
        hl: 'en',
        uule: 'w+CAIQICIaQXVzdGluLFRleGFzLFVuaXRlZCBTdGF0ZXM',
        google_domain: 'google.co.uk',
        device: 'mobile',
      },
    ),
  );
  t.same(out.search_parameters, {
    engine: 'google',
    q: 'coffee',
    location_requested: 'Austin, Texas',
    location_used: 'Austin,Texas,United States',
    google_domain: 'google.co.uk',
    hl: 'en',
    gl: 'us',
    device: 'mobile',
    tbs: 'qdr:d',
    safe: 'active',
  });
  const params = out.search_parameters as Record<string, unknown>;
  for (const name of ['keyword', 'engine_domain', 'capture_aio', 'no_cache', 'stop_domain', 'api_key'])
    t.notOk(name in params, `${name} is not echoed`);
  t.notOk('uule' in params, 'the uule a location became is not echoed as if the request had sent it');
});

t.test('compat › without targeting: the request’s own gl/hl, google.com and desktop by default', async (t) => {
  t.same(toCompat(result({ keyword: 'x' })).search_parameters, {
    engine: 'google',
    q: 'x',
    google_domain: 'google.com',
    device: 'desktop',
  });
  t.same(
    toCompat(result({ keyword: 'x', gl: 'de', hl: 'de', engine_domain: 'google.de', uule: 'w+abc', tbm: 'nws' }))
      .search_parameters,
    {
      engine: 'google',
      q: 'x',
      google_domain: 'google.de',
      hl: 'de',
      gl: 'de',
      device: 'desktop',
      uule: 'w+abc',
      tbm: 'nws',
    },
    'a uule the request gave is echoed',
  );
  const noUsed = toCompat(result({ keyword: 'x', location: 'Paris' })).search_parameters as Record<string, unknown>;
  t.equal(noUsed.location_requested, 'Paris');
  t.notOk('location_used' in noUsed, 'no location_used when the crawl did not record one');
});

t.test('compat › no pagination pointing at Google pages, no invented serpapi_pagination', async (t) => {
  const out = toCompat(
    result({ keyword: 'x' }, undefined, {
      pagination: { current: 1, next: 'https://www.google.com/search?q=x&start=10', other_pages: { 2: 'x' } },
      related_searches: [{ query: 'y', link: 'https://www.google.com/search?q=y' }],
    }),
  );
  t.notOk('pagination' in out, 'pagination left out');
  t.notOk('serpapi_pagination' in out, 'serpapi_pagination left out');
  t.same(out.related_searches, [{ query: 'y', link: 'https://www.google.com/search?q=y' }], 'other features pass');
});

t.test('compat › envelope: status word, timestamps, organic without the native page number', async (t) => {
  const out = toCompat(result({ keyword: 'x' }));
  t.same(out.search_metadata, {
    id: '0123456789abcdef01234567',
    status: 'Success',
    created_at: '2026-01-02 03:04:05 UTC',
  });
  t.same(out.search_information, { total_results: 5 });
  t.same(out.organic_results, [{ position: 1, title: 'A', link: 'https://a.example/' }]);
});
