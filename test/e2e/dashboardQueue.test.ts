import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import t from 'tap';
import { chromiumMissing, signedInDashboard } from '../support/chromium.js';
import { startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { startProxies } from '../support/proxies.js';
import { checks, monitorApi } from '../support/ranks.js';
import { pollJob, type RunningService, removeDir, startService, submit, tempDataDir } from '../support/service.js';

/**
 * The dashboard's service view in Chromium with a backlog and a monitor (docs/operations.md#admin-dashboard): the
 * Queue depth card says what the lanes table says; the keys with jobs not yet done are named for the lane with the
 * backlog, while its jobs wait and while the last of them crawl; every lane's demand is drawn at least 2 px tall beside
 * the fleet's capacity (a log scale); and after a restart with fewer proxies, then none, the routes of the run before
 * leave the routes table and the capacity. The service view's screenshot is kept in test/.artifacts/dashboard/.
 */
const skip = fixturesMissing() ?? chromiumMissing();
const ADMIN = 'dashboard-queue-admin-token-0123456789';
const SHOTS = join(import.meta.dirname, '..', '.artifacts', 'dashboard');
// the bulk lane's backlog: with two crawl slots a lane it waits for several seconds, and costs 120 pages of parsing
const BACKLOG = 12;

interface LaneRow {
  lane: string;
  waiting: number;
  crawling: number;
  keys: string;
}

/** the lanes table and the Queue depth card as the page shows them, read in one go */
const readQueue = async (page: Page) => {
  const { card, cells } = await page.evaluate(() => ({
    card: document.querySelector('#queue-depth')?.textContent ?? '',
    cells: Array.from(document.querySelectorAll('#lanes-table tbody tr')).map((tr) =>
      Array.from(tr.querySelectorAll('th, td')).map((c) => c.textContent ?? ''),
    ),
  }));
  const num = (s: string | undefined) => Number((s ?? '').replace(/,/g, ''));
  const rows: LaneRow[] = cells.map((c) => ({
    lane: c[0] ?? '',
    waiting: num(c[1]),
    crawling: num(c[3]),
    keys: c[4] ?? '',
  }));
  return { card, rows };
};

/** the service view loaded afresh: reload and wait until the page has drawn the lanes table */
const reloadService = async (page: Page) => {
  await page.reload();
  await page.locator('#lanes-table tbody tr').first().waitFor();
};

/** the routes table's first column: each route (and its proxy), or the note that none reported */
const routesShown = async (page: Page) =>
  (await page.locator('#routes-table tbody tr td:first-child').allTextContents()).map((r) => r.trim());

t.test('the service view with a backlog, monitors and a restart with fewer routes', { skip }, async (t) => {
  mkdirSync(SHOTS, { recursive: true });
  const proxies = await startProxies(3);
  t.teardown(() => proxies.close());
  // the backlog's pages answer slowly (400 ms each: a top-100 search takes 4 s or more), the rest at once
  const google = await startFakeGoogle({ latencyMs: (_start, q) => (q.startsWith('backlog') ? 400 : 0) });
  t.teardown(() => google.close());
  const data = tempDataDir();
  let svc: RunningService | undefined;
  t.teardown(async () => {
    await svc?.kill();
    removeDir(data);
  });
  const serve = async (proxyUrls: string[]) => {
    svc = await startService(data, {
      SERP_GOOGLE_ORIGIN: google.origin,
      SERP_ADMIN_TOKEN: ADMIN,
      SERP_PROXY_URLS: proxyUrls.join(','),
      SERP_MONITOR_TICK_MS: '200',
      SERP_MONITOR_SPREAD_MAX_S: '2',
      // two crawl slots a lane (and two pages in flight a route): a backlog of a dozen top-100 searches waits
      SERP_CRAWLER_CONCURRENCY: '2',
    });
    return svc.url;
  };
  const service = async (base: string) =>
    (await (await fetch(`${base}/admin/api/service`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as {
      capacity: { routes: number; pages_per_minute: number | null };
      routes: Array<{ route: string }>;
    };

  let base = await serve(proxies.urls);
  const mint = async (label: string) =>
    (await (
      await fetch(`${base}/admin/api/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tier: 'pro', label }),
      })
    ).json()) as { key: string; key_id: string };
  const live = await mint('live team');
  const bulk = await mint('bulk team');

  // the live lane: one search of one page; the scheduled lane: a daily monitor of two keywords (its first run now)
  const one = await submit(base, live.key, { keyword: 'one live search', depth: 10 });
  t.equal(one.status, 202);
  t.equal((await pollJob(base, live.key, ((await one.json()) as { job_id: string }).job_id)).status, 200);
  const monitors = monitorApi(base, live.key);
  const created = await monitors.call('POST', '/monitors', {
    name: 'demand',
    keywords: ['monitored one', 'monitored two'],
    domains: ['wikipedia.org'],
    schedule: 'daily',
    depth: 10,
  });
  t.equal(created.status, 201, created.text.slice(0, 200));
  await monitors.waitForHistory(created.json.monitor_id, (p) => checks(p) >= 2);

  // the dashboard open before the backlog, so the backlog still waits when the page is first read however long
  // Chromium took to start
  const page = await signedInDashboard(t, base, ADMIN);
  await page.locator('#lanes-table tbody tr').first().waitFor();

  // the bulk lane: a backlog of top-100 searches of one key
  const backlog: string[] = [];
  for (let i = 0; i < BACKLOG; i++) {
    const res = await submit(base, bulk.key, { keyword: `backlog ${i}`, priority: 'bulk', no_cache: true });
    t.equal(res.status, 202, `backlog search ${i} queued`);
    backlog.push(((await res.json()) as { job_id: string }).job_id);
  }
  await reloadService(page);
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));

  await t.test('the Queue depth card says what the lanes table says', async (t) => {
    const { card, rows } = await readQueue(page);
    const waiting = rows.reduce((n, r) => n + r.waiting, 0);
    const crawling = rows.reduce((n, r) => n + r.crawling, 0);
    t.same(
      rows.map((r) => r.lane),
      ['live', 'scheduled', 'bulk'],
      'a row per lane',
    );
    t.equal(card, `${waiting} waiting, ${crawling} crawling`, 'the card is the table summed');
    const b = rows.find((r) => r.lane === 'bulk') as LaneRow;
    t.ok(b.waiting > 0, `the backlog waits (${b.waiting} waiting, ${b.crawling} crawling)`);
    t.ok(b.waiting + b.crawling <= BACKLOG, 'no job counted twice');
    t.match(b.keys, /\(bulk team\): \d+ waiting, \d+ crawling/, 'the key of the backlog is named');
    t.match(await page.locator('#queue-age').textContent(), /^\d+ s \(since \d{4}-\d\d-\d\d \d\d:\d\d\)$/);
  });

  await t.test("every lane's demand is drawn at least 2 px tall beside the capacity", async (t) => {
    const bars = await page.locator('#demand-chart svg rect[data-series]').evaluateAll((els) =>
      els.map((e) => ({
        series: e.getAttribute('data-series'),
        value: Number(e.getAttribute('data-value')),
        height: e.getBoundingClientRect().height,
      })),
    );
    t.same(
      [...new Set(bars.map((b) => b.series))].sort(),
      ['bulk', 'live', 'scheduled'],
      'a bar for each lane that asked for pages',
    );
    const flat = bars.filter((b) => b.value > 0 && b.height < 2);
    t.same(flat, [], `each of the ${bars.length} non-zero bars is at least 2 px tall`);
    const liveBar = bars.find((b) => b.series === 'live' && b.value === 1);
    t.ok(liveBar, 'the live search: one page this hour');
    const bulkBar = bars.find((b) => b.series === 'bulk' && b.value === BACKLOG * 10);
    t.ok(bulkBar, `the backlog: ${BACKLOG * 10} pages this hour`);
    t.ok((bulkBar?.height ?? 0) > (liveBar?.height ?? 0), 'more pages, a taller bar');
    const capacity = page.locator('#demand-chart svg line.s-capacity');
    t.equal(await capacity.count(), 1, 'the capacity is a line across the chart');
    t.match(await capacity.locator('title').textContent(), /^capacity: [\d,]+ pages an hour$/);
    t.match(await page.locator('#demand-chart svg').getAttribute('aria-label'), /log scale/);
    await page.locator('#service').screenshot({ path: join(SHOTS, '11-service-backlog.png') });
  });

  await t.test('the key is still named while the last of its backlog crawls', async (t) => {
    let last: LaneRow | undefined;
    const deadline = Date.now() + 180_000;
    while (Date.now() < deadline) {
      await reloadService(page);
      const { card, rows } = await readQueue(page);
      last = rows.find((r) => r.lane === 'bulk');
      t.equal(
        card,
        `${rows.reduce((n, r) => n + r.waiting, 0)} waiting, ${rows.reduce((n, r) => n + r.crawling, 0)} crawling`,
        'card and table agree at every reload',
      );
      if (last && last.waiting === 0) break;
    }
    t.ok(
      last && last.waiting === 0 && last.crawling > 0,
      `caught with none waiting and some crawling (${last?.crawling})`,
    );
    t.match(last?.keys, /\(bulk team\): 0 waiting, [1-9]\d* crawling/, 'the key of the crawling backlog is named');
  });

  await t.test('the backlog completes', async (t) => {
    const ends = await Promise.all(backlog.map((id) => pollJob(base, bulk.key, id, 'json', 240_000)));
    t.same(
      ends.map((r) => r.status),
      backlog.map(() => 200),
      'every search of the backlog answered',
    );
    await reloadService(page);
    const { card, rows } = await readQueue(page);
    t.equal(card, '0 waiting, 0 crawling');
    t.equal(rows.find((r) => r.lane === 'bulk')?.keys, '–', 'no key has jobs left in the lane');
    t.equal(await page.locator('#queue-age').textContent(), 'none waiting');
    t.same(
      (await routesShown(page)).map((r) => r.split(' ')[0]),
      ['proxy-1', 'proxy-2', 'proxy-3'],
      'the three proxies crawled',
    );
    t.match(await page.locator('#capacity-note').textContent(), /\(3 routes;/);
    t.same(pageErrors, [], 'no script error');
  });

  await t.test('after a restart with one proxy, the other two leave the routes and the capacity', async (t) => {
    await svc?.stop();
    base = await serve(proxies.urls.slice(0, 1));
    const p = await signedInDashboard(t, base, ADMIN);
    await p.locator('#routes-table tbody tr').first().waitFor();
    const rows = await routesShown(p);
    t.equal(rows.length, 1, rows.join(' | '));
    t.match(rows[0], /^proxy-1 \(127\.0\.0\.1:\d+\)/, 'proxy-1, which this run has, with its last hour');
    t.match(await p.locator('#capacity-note').textContent(), /\(1 route;/);
    const view = await service(base);
    t.equal(view.capacity.routes, 1, 'the capacity counts one route');
    t.same(
      view.routes.map((r) => r.route),
      ['proxy-1'],
    );
  });

  await t.test(
    'after a restart without proxies, no proxy is left; the direct route shows once it crawls',
    async (t) => {
      await svc?.stop();
      base = await serve([]);
      const p = await signedInDashboard(t, base, ADMIN);
      await p.locator('#routes-table tbody tr').first().waitFor();
      t.same(await routesShown(p), ['No route of the running fleet reported a crawl in the last hour.']);
      t.equal(await p.locator('#capacity-note').textContent(), 'Capacity not known yet: no crawl has reported.');
      t.match(await service(base), { capacity: { routes: 0, pages_per_minute: null }, routes: [] });
      const res = await submit(base, live.key, { keyword: 'after the restart', depth: 10 });
      t.equal((await pollJob(base, live.key, ((await res.json()) as { job_id: string }).job_id)).status, 200);
      await p.reload();
      await p.locator('#routes-table tbody tr', { hasText: 'direct' }).waitFor();
      t.same(await routesShown(p), ['direct'], 'only the route this run has');
      t.match(await p.locator('#capacity-note').textContent(), /\(1 route;/);
    },
  );
});
