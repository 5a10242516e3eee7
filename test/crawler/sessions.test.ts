import t from 'tap';
import { loadConfig } from '../../services/config/config.js';
import { CrawlAbortedError, CrawlNoRouteError } from '../../services/crawler/errors.js';
import { createSessionPool } from '../../services/crawler/sessions.js';
import type { CrawlSession } from '../../services/ports/fetcher.js';

/** a pool's configuration from variables as an operator sets them, unpaced unless they say otherwise */
const routes = (env: Record<string, string> = {}) => loadConfig({ SERP_ROUTE_MAX_RPM: '0', ...env });

t.test('SessionPool', async (t) => {
  t.test('pins one live session per proxy and device, spreading acquisitions over the proxies', async (t) => {
    const pool = createSessionPool(routes({ SERP_PROXY_URLS: 'http://p1:8000,http://p2:8000' }));
    const a = await pool.acquire('desktop');
    const b = await pool.acquire('desktop');
    const c = await pool.acquire('desktop');
    t.not(a.proxyUrl, b.proxyUrl);
    t.equal(c.id, a.id, 'the same proxy gives back its live session');
    const m = await pool.acquire('mobile');
    t.match(m.userAgent, /Mobile/);
    t.not(m.id, a.id);
    t.equal(pool.stats().proxies, 2);
  });

  t.test('a retired session is never handed out again and its proxy cools down', async (t) => {
    let clock = 1_000;
    const pool = createSessionPool(routes({ SERP_PROXY_URLS: 'http://p1,http://p2', SERP_ROUTE_COOLDOWN_S: '0.1' }), {
      now: () => clock,
    });
    const a = await pool.acquire('desktop');
    pool.retire(a);
    for (let i = 0; i < 3; i++) {
      const s = await pool.acquire('desktop');
      t.not(s.id, a.id);
      t.not(s.proxyUrl, a.proxyUrl, 'the cooling proxy is skipped');
    }
    clock += 100;
    const ids = new Set([(await pool.acquire('desktop')).proxyUrl, (await pool.acquire('desktop')).proxyUrl]);
    t.equal(ids.size, 2, 'back in rotation after the cooldown, with a new session');
    t.match(pool.stats(), { opened: 3, retired: 1, proxies: 2 });
  });

  t.test('cooldowns double with consecutive blocks, and every proxy cooling makes acquire wait', async (t) => {
    const pool = createSessionPool(routes({ SERP_ROUTE_COOLDOWN_S: '0.04', SERP_ROUTE_COOLDOWN_MAX_S: '1' }));
    const waitFor = async () => {
      const started = performance.now();
      const s = await pool.acquire('desktop');
      return { s, waited: performance.now() - started };
    };
    pool.retire((await waitFor()).s);
    const second = await waitFor();
    t.ok(second.waited >= 35, `first block: waited ${Math.round(second.waited)} ms for the cooldown`);
    pool.retire(second.s);
    const third = await waitFor();
    t.ok(third.waited >= 75, `second block in a row: waited ${Math.round(third.waited)} ms, twice as long`);
    const controller = new AbortController();
    pool.retire(third.s);
    setTimeout(() => controller.abort(), 20);
    await t.rejects(pool.acquire('desktop', controller.signal), CrawlAbortedError, 'an abort ends the wait');
  });

  t.test('holds each route to its in-flight budget: a release lets the next acquirer in', async (t) => {
    const pool = createSessionPool(routes({ SERP_PROXY_URLS: 'http://p1,http://p2', SERP_ROUTE_MAX_IN_FLIGHT: '2' }));
    const held = await Promise.all([1, 2, 3, 4].map(() => pool.acquire('desktop')));
    t.equal(pool.stats().inFlight, 4, 'two per route on two routes');
    t.same(
      held.map((s) => s.proxyUrl).sort(),
      ['http://p1', 'http://p1', 'http://p2', 'http://p2'],
      'spread over both routes',
    );
    let fifth: string | undefined;
    const waiting = pool.acquire('desktop').then((s) => {
      fifth = s.proxyUrl;
      return s;
    });
    await new Promise((r) => setTimeout(r, 30));
    t.equal(fifth, undefined, 'a fifth request waits while every route is at its budget');
    pool.release(held[1]!);
    const s = await waiting;
    t.equal(s.proxyUrl, held[1]?.proxyUrl, 'it takes the slot that was released');
    t.equal(pool.stats().inFlight, 4);
    for (const h of [...held, s]) pool.release(h);
    t.equal(pool.stats().inFlight, 0, 'every slot back once released');
    const controller = new AbortController();
    const blockers = await Promise.all([1, 2, 3, 4].map(() => pool.acquire('desktop')));
    setTimeout(() => controller.abort(), 10);
    await t.rejects(pool.acquire('desktop', controller.signal), CrawlAbortedError, 'an abort ends a wait for a slot');
    for (const b of blockers) pool.release(b);
  });

  t.test('opens a session once for concurrent acquirers, with the opener cookies', async (t) => {
    let opens = 0;
    const pool = createSessionPool(routes(), {
      open: async () => {
        opens += 1;
        await new Promise((r) => setTimeout(r, 20));
        return 'NID=abc';
      },
    });
    const sessions = await Promise.all([pool.acquire('desktop'), pool.acquire('desktop'), pool.acquire('desktop')]);
    t.equal(opens, 1);
    t.same(new Set(sessions.map((s) => s.id)).size, 1);
    t.equal(sessions[0]?.cookies, 'NID=abc');
    pool.succeeded(sessions[0]!, 'NID=abc; SOCS=x');
    t.equal((await pool.acquire('desktop')).cookies, 'NID=abc; SOCS=x', 'cookies a fetch brought back are kept');
  });

  t.test('paces each route: requests wait their turn, first come first served, spread over the routes', async (t) => {
    // 600 a minute: 105 ms apart with the 5 % guard
    const pool = createSessionPool(routes({ SERP_PROXY_URLS: 'http://p1,http://p2', SERP_ROUTE_MAX_RPM: '600' }));
    const started = performance.now();
    const order: string[] = [];
    await Promise.all(
      [1, 2, 3, 4, 5, 6].map(async (i) => {
        const s = await pool.acquire('desktop');
        order.push(`${i}@${s.route}`);
        pool.release(s);
      }),
    );
    const took = performance.now() - started;
    t.same(
      order.map((o) => o.split('@')[0]),
      ['1', '2', '3', '4', '5', '6'],
      'in the order they asked',
    );
    t.same(
      order.map((o) => o.split('@')[1]).sort(),
      ['proxy-1', 'proxy-1', 'proxy-1', 'proxy-2', 'proxy-2', 'proxy-2'],
      'three on each route',
    );
    t.ok(took >= 190, `two spacings of 105 ms waited on each route (${Math.round(took)} ms)`);
    t.match(pool.report('proxy-1'), { route: 'proxy-1', proxy: 'p1', rpm: 600, lastMinute: 3 });
  });

  t.test("a session that takes long to open pushes its route's pace back by that long", async (t) => {
    // 60 a minute: 1,050 ms apart with the guard; an opening is reserved as three (home page, reload, the page)
    let clock = 100_000;
    const pool = createSessionPool(routes({ SERP_ROUTE_MAX_RPM: '60' }), {
      now: () => clock,
      open: async () => {
        clock += 5_000; // Chromium starting on a loaded machine
        return { cookies: 'GSG=1', requests: 2, bytes: 0 };
      },
    });
    const first = await pool.acquire('desktop');
    pool.release(first);
    // reserved at 100 s, the three went at 105 s: the next is due three spacings after that, not after 100 s
    clock = 108_100;
    let second: CrawlSession | undefined;
    const waiting = pool.acquire('desktop').then((s) => {
      second = s;
    });
    await new Promise((r) => setTimeout(r, 30));
    t.equal(second, undefined, 'not at 108.1 s (paced from 100 s, it would have gone at 103.15 s)');
    clock = 108_150;
    await waiting;
    t.ok(second, 'at 108.15 s: 105 s + 3 × 1,050 ms');
  });

  t.test('when every route rests longer than a page may wait: CrawlNoRouteError at once', async (t) => {
    const pool = createSessionPool(
      routes({ SERP_PROXY_URLS: 'http://p1', SERP_ROUTE_COOLDOWN_S: '60', SERP_NO_ROUTE_WAIT_S: '1' }),
    );
    pool.retire(await pool.acquire('desktop'));
    const started = performance.now();
    await t.rejects(pool.acquire('desktop'), CrawlNoRouteError, 'no route');
    t.ok(performance.now() - started < 500, 'without waiting for a cooldown it cannot outlast');
    const short = createSessionPool(routes({ SERP_ROUTE_COOLDOWN_S: '0.05', SERP_NO_ROUTE_WAIT_S: '1' }));
    short.retire(await short.acquire('desktop'));
    t.ok(await short.acquire('desktop'), 'a rest shorter than the bound is waited out');
  });

  t.test('a challenge drops the session when a browser opens them; a CAPTCHA parks the route', async (t) => {
    let opens = 0;
    const pool = createSessionPool(routes({ SERP_ROUTE_COOLDOWN_S: '60' }), {
      open: async () => {
        opens += 1;
        return { cookies: `GSG=${opens}`, requests: 2, bytes: 10 };
      },
    });
    const costs: number[] = [];
    const a = await pool.acquire('desktop', undefined, (c) => costs.push(c.requests));
    t.equal(a.cookies, 'GSG=1');
    t.same(costs, [2], 'the opening cost goes to the search that caused it');
    pool.release(a);
    pool.blocked(a, 'js_challenge');
    const b = await pool.acquire('desktop');
    t.not(b.id, a.id, 'a new session');
    t.equal(b.cookies, 'GSG=2', 'opened by the browser again');
    t.equal(pool.report('direct')?.coolUntil, undefined, 'the route does not rest');
    pool.release(b);
    pool.blocked(b, 'captcha');
    t.ok((pool.report('direct')?.coolUntil ?? 0) > Date.now(), 'a CAPTCHA parks the route');
    const httpOnly = createSessionPool(routes({ SERP_ROUTE_COOLDOWN_S: '60' }));
    const c = await httpOnly.acquire('desktop');
    t.match(c.cookies, /^SOCS=/, 'sessions start with the consent cookie');
    httpOnly.release(c);
    httpOnly.blocked(c, 'js_challenge');
    t.ok(httpOnly.report('direct')?.coolUntil, 'without a browser a challenge cannot be passed: the route rests');
  });

  t.test(
    'avoid: another route serves, waiting for it if need be; with none, the avoided one on a new session',
    async (t) => {
      let clock = 1_000;
      const pool = createSessionPool(
        routes({
          SERP_PROXY_URLS: 'http://p1,http://p2,http://p3',
          SERP_ROUTE_MAX_IN_FLIGHT: '1',
          SERP_ROUTE_COOLDOWN_S: '0.5',
        }),
        { now: () => clock },
      );
      const avoid = { avoid: ['proxy-1', 'proxy-2'] };
      const first = await pool.acquire('desktop', undefined, undefined, avoid);
      t.equal(first.route, 'proxy-3', 'the one route not avoided');
      let second: CrawlSession | undefined;
      const waiting = pool.acquire('desktop', undefined, undefined, avoid).then((s) => {
        second = s;
      });
      await new Promise((r) => setImmediate(r));
      t.equal(second, undefined, 'proxy-3 is busy: it waits for it rather than take an avoided route');
      pool.release(first);
      await waiting;
      t.equal(second?.route, 'proxy-3');
      t.equal(second?.id, first.id, 'its live session');
      pool.release(second!);

      // proxy-3 cools down: nothing else can serve, so the avoided routes do, each on a new session
      const p1 = await pool.acquire('desktop');
      t.equal(p1.route, 'proxy-1');
      pool.release(p1);
      const three = await pool.acquire('desktop', undefined, undefined, { avoid: ['proxy-3'] });
      t.not(three.route, 'proxy-3');
      pool.release(three);
      pool.retire(second!);
      const fallback = await pool.acquire('desktop', undefined, undefined, avoid);
      t.equal(fallback.route, 'proxy-1', 'the round goes on over the avoided routes');
      t.not(fallback.id, p1.id, 'a new session on it: new cookies');
      pool.release(fallback);
      clock += 500;
      const back = await pool.acquire('desktop', undefined, undefined, avoid);
      t.equal(back.route, 'proxy-3', 'rested: the route not avoided serves again');
    },
  );

  t.test('prefer: the route set aside and tried again serves, waiting for it if busy', async (t) => {
    const pool = createSessionPool(
      routes({ SERP_PROXY_URLS: 'http://p1,http://p2,http://p3', SERP_ROUTE_MAX_IN_FLIGHT: '1' }),
    );
    const prefer = { prefer: 'proxy-2' };
    const first = await pool.acquire('desktop', undefined, undefined, prefer);
    t.equal(first.route, 'proxy-2', 'the preferred route, not the round’s next (proxy-1)');
    let second: CrawlSession | undefined;
    const waiting = pool.acquire('desktop', undefined, undefined, prefer).then((s) => {
      second = s;
    });
    await new Promise((r) => setImmediate(r));
    t.equal(second, undefined, 'proxy-2 is busy: it waits for it');
    pool.release(first);
    await waiting;
    t.equal(second?.route, 'proxy-2');
    pool.release(second!);
    const unknown = await pool.acquire('desktop', undefined, undefined, { prefer: 'proxy-9' });
    t.ok(
      ['proxy-1', 'proxy-2', 'proxy-3'].includes(String(unknown.route)),
      'a route the fleet no longer has: any serves',
    );
    pool.release(unknown);
  });

  t.test('avoid with one route: the same route on a new session', async (t) => {
    const pool = createSessionPool(routes());
    const a = await pool.acquire('desktop');
    pool.release(a);
    const b = await pool.acquire('desktop', undefined, undefined, { avoid: ['direct'] });
    t.equal(b.route, 'direct');
    t.not(b.id, a.id, 'a fresh session');
    pool.release(b);
    const c = await pool.acquire('desktop');
    t.equal(c.id, b.id, "which is the route's live session from then on");
    pool.succeeded(a, 'NID=old');
    t.equal(c.cookies === 'NID=old', false, 'the old session, still in flight elsewhere, changes nothing');
  });
});

t.test(
  'SessionPool › with the configuration’s defaults a block parks its route for SERP_ROUTE_COOLDOWN_S',
  async (t) => {
    const clock = 1_000;
    const pool = createSessionPool(loadConfig({}), { now: () => clock });
    pool.retire(await pool.acquire('desktop'));
    t.equal(pool.report('direct')?.coolUntil, clock + 60_000, 'the schema’s 60 s, not a default of the pool’s own');
  },
);
