import t from 'tap';
import { uuleForName } from '../../services/geo/uule.js';
import { fixturesMissing } from '../support/fixtures.js';
import { pollJob, startStack, submit } from '../support/service.js';

const missing = fixturesMissing();

/**
 * `search_metadata.targeting` says what was sent to Google (docs/decisions.md#searches-and-the-cache), for a crawl and
 * for a cache answer.
 */
t.test('the targeting used, through a listening port', { skip: missing }, async (t) => {
  const { google, svc, mintKey } = await startStack(t);
  const { key } = await mintKey(['--tier', 'free']);
  const run = async (body: Record<string, unknown>) => {
    const res = await submit(svc.url, key, body);
    t.ok(res.status === 202 || res.status === 200, `submitted (${res.status})`);
    const { job_id: jobId } = (await res.json()) as { job_id: string };
    const done = await pollJob(svc.url, key, jobId, 'json');
    t.equal(done.status, 200);
    return (await done.json()) as { search_metadata: Record<string, unknown> };
  };

  const usUule = uuleForName('United States');
  const fromLocation = {
    location: 'United States',
    gl: 'us',
    hl: 'en',
    uule: usUule,
    google_domain: 'google.com',
    device: 'mobile',
  };

  t.test('a location resolves to its canonical name, gl, hl and uule', async (t) => {
    const before = google.searches().length;
    const native = await run({ keyword: 'coffee', location: 'united states', device: 'mobile' });
    t.match(native.search_metadata, { status: 'done', cached: false });
    t.same(native.search_metadata.targeting, fromLocation);
    const first = google.searches()[before];
    t.match(first?.query, { q: 'coffee', gl: 'us', hl: 'en', uule: usUule }, 'as Google was asked');
  });

  t.test('explicit gl / hl win over the location’s, on the domain asked', async (t) => {
    const native = await run({
      keyword: 'coffee',
      location: 'United States',
      gl: 'ca',
      hl: 'fr',
      device: 'tablet',
      engine_domain: 'google.ca',
    });
    t.same(native.search_metadata.targeting, {
      location: 'United States',
      gl: 'ca',
      hl: 'fr',
      uule: usUule,
      google_domain: 'google.ca',
      device: 'tablet',
    });
  });

  t.test('no targeting asked: the domain and the device', async (t) => {
    const native = await run({ keyword: 'tea' });
    t.same(native.search_metadata.targeting, { google_domain: 'google.com', device: 'desktop' });
  });

  t.test('a cache answer shows the targeting its source crawl used', async (t) => {
    const before = google.searches().length;
    const native = await run({ keyword: 'coffee', location: 'united states', device: 'mobile' });
    t.match(native.search_metadata, { cached: true });
    t.same(native.search_metadata.targeting, fromLocation);
    t.equal(google.searches().length, before, 'Google was not asked again');
  });
});
