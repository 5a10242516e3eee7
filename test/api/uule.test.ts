import t from 'tap';
import { uuleForName, uuleForPoint } from '../../services/geo/uule.js';
import { buildTestApp } from '../support/app.js';

/** A uule Google cannot read would place the search by the proxy's address: it is refused before a job exists. */
t.test('a uule that does not decode', async (t) => {
  const { app, mintKey } = await buildTestApp(t);
  const key = await mintKey('pro');
  const headers = { 'x-api-key': key };

  t.test('/v1/search: 422 naming it; a good one is a job', async (t) => {
    const bad = await app.inject({
      method: 'POST',
      url: '/v1/search',
      headers,
      payload: { keyword: 'x', uule: 'w+abc' },
    });
    t.equal(bad.statusCode, 422);
    t.match(bad.json(), { code: 'SERP_API_INVALID_UULE', detail: /uule "w\+abc" does not decode.*location/ });
    for (const uule of [
      uuleForName('Austin,Texas,United States'),
      uuleForPoint(30.26, -97.74),
      'w+CAQQCFISCS0EZSFH_RKIEe8boaiT4nXf',
    ]) {
      const ok = await app.inject({ method: 'POST', url: '/v1/search', headers, payload: { keyword: 'x', uule } });
      t.equal(ok.statusCode, 202, uule);
    }
  });

  t.test("compat /search: a bad parameter in SerpApi's shape, naming it", async (t) => {
    const res = await app.inject({ method: 'GET', url: `/search.json?q=x&async=true&uule=nonsense&api_key=${key}` });
    t.equal(res.statusCode, 400);
    t.match(res.json(), { error: /uule "nonsense" does not decode/, detail: /uule "nonsense" does not decode/ });
    const ok = await app.inject({
      method: 'GET',
      url: `/search.json?q=x&async=true&uule=${encodeURIComponent(uuleForName('Austin,Texas,United States'))}&api_key=${key}`,
    });
    t.equal(ok.statusCode, 200);
  });

  t.test('/v1/monitors: 422 naming it, nothing recorded', async (t) => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/monitors',
      headers,
      payload: { name: 'm', keywords: ['x'], domains: ['example.com'], schedule: 'daily', uule: 'w+!!' },
    });
    t.equal(res.statusCode, 422);
    t.match(res.json(), { code: 'SERP_API_INVALID_UULE', detail: /uule "w\+!!" does not decode/ });
    const list = await app.inject({ method: 'GET', url: '/v1/monitors', headers });
    t.same(list.json().monitors, []);
  });
});

/** An `a+` uule's position is Google's as much as `lat`/`lon`/`radius` are: the same limits hold for it. */
t.test('an a+ uule outside the coordinates’ limits', async (t) => {
  const { app, mintKey } = await buildTestApp(t);
  const key = await mintKey('pro');
  const headers = { 'x-api-key': key };
  const cases = [
    { uule: uuleForPoint(1000, 10), says: /uule: its latitude is 1000°, and must be between -90 and 90°.*`lat`/ },
    { uule: uuleForPoint(10, -9999), says: /uule: its longitude is -9999°, and must be between -180 and 180°/ },
    { uule: uuleForPoint(10, 10, -5), says: /uule: its radius is -5 m, and must be above 0 and at most 1000000 m/ },
    { uule: uuleForPoint(10, 10, 2_000_000), says: /uule: its radius is 2000000 m/ },
  ];

  t.test('/v1/search: 422 naming the uule and the coordinate', async (t) => {
    for (const { uule, says } of cases) {
      const res = await app.inject({ method: 'POST', url: '/v1/search', headers, payload: { keyword: 'x', uule } });
      t.equal(res.statusCode, 422, uule);
      t.match(res.json(), { code: 'SERP_API_INVALID_UULE', detail: says });
    }
    const edge = uuleForPoint(-90, 180, 1_000_000);
    const ok = await app.inject({ method: 'POST', url: '/v1/search', headers, payload: { keyword: 'x', uule: edge } });
    t.equal(ok.statusCode, 202, 'the limits themselves are accepted');
  });

  t.test('compat /search: 400 in SerpApi’s shape with the same words', async (t) => {
    for (const { uule, says } of cases) {
      const res = await app.inject({
        method: 'GET',
        url: `/search.json?q=x&async=true&uule=${encodeURIComponent(uule)}&api_key=${key}`,
      });
      t.equal(res.statusCode, 400, uule);
      t.match(res.json(), { error: says });
    }
  });

  t.test('/v1/monitors: 422, nothing recorded', async (t) => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/monitors',
      headers,
      payload: { name: 'm', keywords: ['x'], domains: ['example.com'], schedule: 'daily', uule: cases[0]!.uule },
    });
    t.equal(res.statusCode, 422);
    t.match(res.json(), { code: 'SERP_API_INVALID_UULE', detail: cases[0]!.says });
    const list = await app.inject({ method: 'GET', url: '/v1/monitors', headers });
    t.same(list.json().monitors, []);
  });
});
