import t from 'tap';
import { CrawlAbortedError } from '../../services/crawler/errors.js';
import { createSessionPool } from '../../services/crawler/sessions.js';

t.test('SessionPool', async (t) => {
  t.test('pins one live session per proxy and device, spreading acquisitions over the proxies', async (t) => {
    const pool = createSessionPool({ proxyUrls: ['http://p1:8000', 'http://p2:8000'] });
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
    const pool = createSessionPool({ proxyUrls: ['http://p1', 'http://p2'], cooldownBaseMs: 100, now: () => clock });
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
    const pool = createSessionPool({ cooldownBaseMs: 40, cooldownMaxMs: 1_000 });
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
    const pool = createSessionPool({ proxyUrls: ['http://p1', 'http://p2'], maxInFlightPerRoute: 2 });
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
    const pool = createSessionPool({
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
});
