import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { DEFAULT_PAGES, startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing, readFixtureText } from '../support/fixtures.js';
import { startProxies } from '../support/proxies.js';
import { buildSchedule, GOOGLE_FAULTS, scheduleDigest } from './schedule.js';

/**
 * The soak's own parts (docs/operations.md#the-soak), so a soak's failure is the service's and not the harness's: the
 * seeded schedule replays exactly, and each fault the fake Google and the proxies inject is what it says, through a
 * listening port.
 */

t.test('the schedule of faults', async (t) => {
  const base = { faultMs: 153_000, cluster: false, proxies: 3, receivers: 3 };
  t.test('the same seed gives the same schedule, another seed another', async (t) => {
    t.same(buildSchedule({ ...base, seed: 42 }), buildSchedule({ ...base, seed: 42 }));
    t.equal(scheduleDigest(buildSchedule({ ...base, seed: 42 })), scheduleDigest(buildSchedule({ ...base, seed: 42 })));
    t.not(scheduleDigest(buildSchedule({ ...base, seed: 42 })), scheduleDigest(buildSchedule({ ...base, seed: 43 })));
  });
  t.test('a three-minute soak meets every kind of Google fault, the network and the receivers', async (t) => {
    for (const seed of [1, 7, 20261207, 20261208]) {
      const kinds = new Set(buildSchedule({ ...base, seed }).map((f) => f.kind));
      for (const k of Object.keys(GOOGLE_FAULTS)) t.ok(kinds.has(k as never), `seed ${seed}: ${k}`);
      for (const k of ['proxy_down', 'placed_elsewhere', 'replay_at_caps'] as const)
        t.ok(kinds.has(k), `seed ${seed}: ${k}`);
      t.ok(
        ['receiver_hang', 'receiver_500', 'receiver_gone'].filter((k) => kinds.has(k as never)).length >= 2,
        `seed ${seed}: receivers misbehave in at least two ways`,
      );
    }
  });
  t.test('Google faults never overlap and end before the phase does', async (t) => {
    const google = buildSchedule({ ...base, seed: 9 }).filter((f) => f.kind in GOOGLE_FAULTS);
    for (let i = 1; i < google.length; i++) t.ok(google[i]!.at >= google[i - 1]!.at + google[i - 1]!.durationMs);
    t.ok(google.every((f) => f.at + f.durationMs <= base.faultMs - 10_000));
  });
  t.test('only a cluster has process faults: each role killed and a NATS node restarted once', async (t) => {
    const embedded = buildSchedule({ ...base, seed: 5 }).map((f) => f.kind);
    t.notOk(embedded.some((k) => k.startsWith('kill_') || k === 'nats_restart'));
    const cluster = buildSchedule({ ...base, seed: 5, cluster: true }).map((f) => f.kind);
    for (const k of ['kill_crawler', 'kill_dispatcher', 'kill_api', 'nats_restart'] as const) {
      t.equal(cluster.filter((c) => c === k).length, 1, k);
    }
  });
});

/** one GET with node's own client: status, headers, the body's bytes, or the error that cut it */
const get = (url: string) =>
  new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer; error?: string; ms: number }>(
    (resolve) => {
      const t0 = Date.now();
      const req = request(url, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        const done = (error?: string) =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
            error,
            ms: Date.now() - t0,
          });
        res.on('end', () => done());
        res.on('error', (e) => done(e.message));
        res.on('aborted', () => done('aborted'));
      });
      req.on('error', (e) =>
        resolve({ status: 0, headers: {}, body: Buffer.alloc(0), error: e.message, ms: Date.now() - t0 }),
      );
      req.end();
    },
  );

t.test('the fake Google answers each fault as it says', { skip: fixturesMissing('serp') }, async (t) => {
  const google = await startFakeGoogle();
  t.teardown(() => google.close());
  const page = readFixtureText(DEFAULT_PAGES[0]!);
  const search = (q: string) => get(`${google.origin}/search?q=${encodeURIComponent(q)}`);

  t.test('a reset: the headers promise the whole page, a third comes, then the connection is gone', async (t) => {
    google.setMode({ trouble: { kind: 'reset' } });
    const r = await search('reset');
    t.equal(r.status, 200);
    t.ok(r.error, `the body ended in an error (${r.error})`);
    t.ok(r.body.length < Buffer.byteLength(page), `${r.body.length} bytes of ${Buffer.byteLength(page)}`);
    t.equal(google.searches().at(-1)?.trouble, 'reset', 'the request is recorded with its trouble');
  });
  t.test('a trickle: a few bytes a second, cut when its time is up', async (t) => {
    google.setMode({ trouble: { kind: 'trickle', forMs: 2_500 } });
    const r = await search('trickle');
    t.ok(r.ms >= 2_000, `it took ${r.ms} ms`);
    t.ok(r.body.length <= 64 * 3, `${r.body.length} bytes arrived`);
    t.ok(r.error, `and the page never completed (${r.error})`);
  });
  t.test('truncated and malformed pages are 200s that are not whole pages', async (t) => {
    google.setMode({ trouble: { kind: 'truncated' } });
    const cut = await search('truncated');
    t.equal(cut.status, 200);
    t.ok(cut.body.length < Buffer.byteLength(page) * 0.5, 'less than half the page');
    t.notMatch(cut.body.toString(), /<\/html>\s*$/, 'without its end');
    google.setMode({ trouble: { kind: 'malformed' } });
    const bad = await search('malformed');
    t.equal(bad.status, 200);
    t.equal(bad.body[0], 0, 'starts with a stray NUL byte');
  });
  t.test('an oversized page is past the 8 MB the crawler reads', async (t) => {
    google.setMode({ trouble: { kind: 'oversized', mb: 9 } });
    const r = await search('big');
    t.ok(r.body.length > 8 * 2 ** 20, `${r.body.length} bytes`);
  });
  t.test('a gzip bomb is small on the wire and inflates to what it says', async (t) => {
    google.setMode({ trouble: { kind: 'gzip_bomb', inflatedMb: 16 } });
    const r = await search('bomb');
    t.equal(r.headers['content-encoding'], 'gzip');
    t.ok(r.body.length < 100_000, `${r.body.length} bytes sent`);
    t.equal(gunzipSync(r.body).length, 16 * 2 ** 20, 'inflates to 16 MB');
  });
  t.test('a redirect loop never ends in a page', async (t) => {
    google.setMode({ trouble: { kind: 'redirect_loop' } });
    let url = `${google.origin}/search?q=loop`;
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await get(url);
      t.equal(r.status, 302, `hop ${i + 1} redirects`);
      url = new URL(String(r.headers.location), google.origin).toString();
      seen.push(url);
    }
    t.equal(new Set(seen).size, 5, 'each time somewhere new');
  });
  t.test('a share of 0.25 troubles one search in four, from the first', async (t) => {
    google.setMode({ trouble: { kind: 'status', status: 503 }, share: 0.25 });
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await search(`share ${i}`)).status);
    t.same(statuses, [503, 200, 200, 200, 503, 200, 200, 200]);
    google.setMode({});
  });
});

t.test('a proxy dies and comes back on its port', { skip: fixturesMissing('serp') }, async (t) => {
  const google = await startFakeGoogle();
  const proxies = await startProxies(2);
  t.teardown(async () => {
    await proxies.close();
    await google.close();
  });
  /** a plain forwarded GET through proxy i (an absolute URI), as the crawler's http fetcher sends it */
  const through = (i: number) =>
    new Promise<number>((resolve) => {
      const proxy = new URL(proxies.urls[i]!);
      const req = request(
        { host: proxy.hostname, port: proxy.port, path: `${google.origin}/search?q=proxy`, method: 'GET' },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', () => resolve(0));
      req.end();
    });
  t.equal(await through(0), 200, 'up: it carries the search');
  await proxies.down(0);
  t.equal(await through(0), 0, 'down: its port refuses');
  t.equal(await through(1), 200, 'the other proxy still carries');
  await proxies.up(0);
  t.equal(await through(0), 200, 'back: it carries again');
  t.equal(
    google
      .searches()
      .at(-1)
      ?.address?.replace(/^::ffff:/, ''),
    proxies.addresses[0],
    'from its own address',
  );
});
