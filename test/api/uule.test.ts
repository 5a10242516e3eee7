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
