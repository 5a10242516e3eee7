import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { CHROMIUM_LOOPBACK_ARG } from '../support/loopback.js';
import { checks, monitorApi, type Point } from '../support/ranks.js';
import { startStack } from '../support/service.js';

/**
 * The dashboard's monitor view (docs/rank-tracking.md) in Debian's Chromium against a real service: a monitor over the
 * rotating fake Google, searched four times with one blocked search among them. The chart has one line per domain with
 * a dot per successful search at the position the history API gives (position 1 at the top), a break in each line at
 * the blocked search (marked once), the best ever ringed; the visibility, changes and alerts tables agree with /v1,
 * and the alerts of the shown keyword are marked on the chart (docs/webhooks.md). The screenshot is kept in
 * test/.artifacts/dashboard/.
 */
const CHROMIUM = '/usr/bin/chromium';
const noChromium = existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM} (apt-get install chromium)`;
if (noChromium && process.env.CI === 'true') throw new Error(`${noChromium}: CI requires it`);
const skip = fixturesMissing() ?? noChromium;

const ADMIN_TOKEN = 'dashboard-monitors-admin-token-0123456789';
const SHOTS = join(import.meta.dirname, '..', '.artifacts', 'dashboard');
const KEYWORD = 'dashboard monitor';
const DOMAINS = ['merriam-webster.com', '*.wikipedia.org', 'vocabulary.com'];

/** the runs of ranked points of a domain between failed or unranked searches: what the chart draws as lines */
const expectedSegments = (points: Point[]) => {
  let n = 0;
  let open = false;
  for (const p of points) {
    if (p.status === 'ranked' && !open) n++;
    open = p.status === 'ranked';
  }
  return n;
};

t.test('the monitor view in Chromium', { skip }, async (t) => {
  mkdirSync(SHOTS, { recursive: true });
  const stack = await startStack(t, {
    google: { rotate: true },
    env: { SERP_ADMIN_TOKEN: ADMIN_TOKEN, SERP_MONITOR_TICK_MS: '200', SERP_MONITOR_SPREAD_MAX_S: '2' },
  });
  const base = stack.svc.url;
  const minted = await fetch(`${base}/admin/api/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tier: 'pro', label: 'tracker' }),
  });
  const { key, key_id: keyId } = (await minted.json()) as { key: string; key_id: string };
  const api = monitorApi(base, key);
  const created = await api.call('POST', '/monitors', {
    name: 'chart',
    keywords: [KEYWORD, 'second keyword'],
    domains: DOMAINS,
    schedule: 'daily',
    alerts: { min_move: 1, top: [3, 10], competitor_outranks: true, run_failed: true },
  });
  t.equal(created.status, 201, created.text.slice(0, 200));
  const id = created.json.monitor_id as string;
  const ofKeyword = (p: Point[]) => p.filter((x) => x.keyword === KEYWORD);
  // each run is waited for until both its keywords are checked (it has completed): one manual run at a time
  await api.waitForHistory(id, (p) => checks(p) >= 2);
  t.equal((await api.call('POST', `/monitors/${id}/runs`, {})).status, 202);
  await api.waitForHistory(id, (p) => checks(p) >= 4);
  stack.google.setMode({ trouble: { kind: 'captcha' }, query: KEYWORD });
  t.equal((await api.call('POST', `/monitors/${id}/runs`, {})).status, 202);
  await api.waitForHistory(id, (p) => checks(p) >= 6);
  stack.google.setMode({});
  t.equal((await api.call('POST', `/monitors/${id}/runs`, {})).status, 202);
  // both keywords searched four times (the second keyword's searches are not blocked)
  const all = ofKeyword(await api.waitForHistory(id, (p) => checks(p) >= 8));
  t.equal(checks(all), 4, 'four searches of the keyword');
  t.equal(new Set(all.filter((p) => p.status === 'failed').map((p) => p.job_id)).size, 1, 'one of them blocked');
  const changes = (await api.call('GET', `/monitors/${id}/changes?min_move=3`)).json;
  // a run's alerts are raised when it completes, a moment after its points are projected: wait until the blocked
  // run's alert is there and the list has not changed for 1.5 s
  type Alert = { alert_id: string; kind: string; keyword: string | null; at: string };
  let alerts: Alert[] = [];
  for (let i = 0, same = 0; i < 300 && same < 15; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const now: Alert[] = (await api.call('GET', `/monitors/${id}/alerts`)).json.alerts;
    const settled = now.some((a) => a.kind === 'run_failed') && now.length === alerts.length;
    same = settled ? same + 1 : 0;
    alerts = now;
  }

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', CHROMIUM_LOOPBACK_ARG] });
  t.teardown(() => browser.close());
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) problems.push(m.text());
  });
  // every call the page makes answers (the browser's own favicon request aside)
  page.on('response', (r) => {
    if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) problems.push(`${r.status()} ${r.url()}`);
  });
  page.on('pageerror', (e) => problems.push(e.message));

  await page.goto(`${base}/admin`);
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.keyboard.press('Enter');
  await page.locator(`[data-view="${keyId}"]`).click();
  await page.locator('#monitors-table tbody tr', { hasText: 'chart' }).waitFor();
  t.match(
    await page.locator('#monitors-table tbody tr').first().textContent(),
    /chart.*2.*merriam-webster\.com.*daily/,
  );
  await page.locator(`[data-monitor="${id}"]`).click();
  await page.locator('#positions-chart svg.positions circle.dot').first().waitFor();

  await t.test('one line per domain, a dot per successful search at its position, 1 at the top', async (t) => {
    const dots = await page.locator('#positions-chart circle.dot').evaluateAll((els) =>
      els.map((e) => ({
        domain: e.getAttribute('data-domain'),
        position: e.getAttribute('data-position'),
        cy: Number(e.getAttribute('cy')),
        cx: Number(e.getAttribute('cx')),
      })),
    );
    for (const domain of DOMAINS) {
      const mine = all.filter((p) => p.domain === domain && p.status !== 'failed');
      const drawn = dots.filter((d) => d.domain === domain);
      t.same(
        drawn.map((d) => d.position),
        mine.map((p) => (p.status === 'ranked' ? String(p.position) : 'not_ranked')),
        `${domain}: the positions of the history API, in time order`,
      );
      t.ok(
        drawn.every((d, i) => i === 0 || d.cx > drawn[i - 1].cx),
        `${domain}: later searches further right`,
      );
      const lines = await page.locator(`#positions-chart polyline[data-domain="${domain}"]`).count();
      t.equal(
        lines,
        expectedSegments(all.filter((p) => p.domain === domain)),
        `${domain}: the line breaks at the failure`,
      );
    }
    const ranked = dots
      .filter((d) => d.position !== 'not_ranked')
      .sort((a, b) => Number(a.position) - Number(b.position));
    t.ok(
      ranked.every((d, i) => i === 0 || d.cy >= ranked[i - 1].cy),
      'a better position is drawn higher (position 1 at the top)',
    );
    t.ok(new Set(ranked.map((d) => d.position)).size > 1, 'positions moved between searches');
  });

  await t.test('the blocked search is a gap, marked once; the best ever is ringed', async (t) => {
    const failedJob = all.find((p) => p.status === 'failed')?.job_id;
    t.equal(await page.locator('#positions-chart [data-failed]').count(), 1, 'one failed search marked');
    t.equal(await page.locator(`#positions-chart [data-failed="${failedJob}"]`).count(), 1, 'the blocked job');
    for (const b of changes.best.filter((x: { keyword: string }) => x.keyword === KEYWORD)) {
      const ring = page.locator(`#positions-chart [data-best="${b.domain}"]`);
      t.equal(await ring.count(), 1, `${b.domain}: best ever #${b.position} ringed`);
      const dot = page.locator(`#positions-chart circle.dot[data-domain="${b.domain}"][data-position="${b.position}"]`);
      t.equal(await ring.getAttribute('cy'), await dot.first().getAttribute('cy'), 'at that position');
    }
    t.match(await page.locator('#positions-chart figcaption').textContent(), /best ever #\d+/);
  });

  await t.test('the visibility and changes tables agree with /v1', async (t) => {
    const vis = (await api.call('GET', `/monitors/${id}/visibility`)).json;
    const rows = await page.locator('#visibility-table tbody tr').allTextContents();
    const days = vis.domains.flatMap((d: { days: unknown[] }) => d.days);
    t.equal(rows.length, days.length, 'a row per domain per day');
    for (const d of vis.domains) {
      for (const day of d.days) {
        const sov = `${(day.share_of_voice * 100).toFixed(1)} %`;
        t.ok(
          rows.some((r) => r.includes(d.domain) && r.includes(day.date) && r.includes(sov)),
          `${d.domain} ${day.date}: share of voice ${sov}`,
        );
      }
    }
    const changeRows = await page.locator('#changes-table tbody tr').allTextContents();
    t.equal(changeRows.length, Math.max(1, changes.changes.length), 'a row per change (or the empty note)');
    if (changes.changes.length) t.match(changeRows[0], changes.changes.at(-1).domain, 'newest first');
  });

  await t.test('the alerts table lists /v1’s alerts, newest first; the chart marks those of its keyword', async (t) => {
    t.equal(alerts.filter((a) => a.kind === 'run_failed').length, 1, 'the blocked run raised one run_failed alert');
    const rows = page.locator('#alerts-table tbody tr[data-alert]');
    t.same(
      await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-alert'))),
      alerts.map((a) => a.alert_id).reverse(),
      'a row per alert, newest first',
    );
    t.match(await page.locator('#alerts-table tbody').textContent(), /run failed \(dashboard monitor: captcha/);
    const marks = await page
      .locator('#positions-chart polygon.alert-mark')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-alert')));
    t.same(
      marks.sort(),
      alerts
        .filter((a) => a.keyword === KEYWORD || a.kind === 'run_failed')
        .map((a) => a.alert_id)
        .sort(),
      'the keyword’s alerts and the failed run are marked on the chart',
    );
  });

  await t.test("a point opens that day's page with its domain's results outlined", async (t) => {
    const dot = page.locator('#positions-chart circle.dot[data-domain="merriam-webster.com"]:not(.hollow)').first();
    const jobId = await dot.getAttribute('data-job');
    // the chart's dots of one search overlap across domains: the point is chosen from the keyboard, as a user can
    await dot.focus();
    await page.keyboard.press('Enter');
    await page.locator('#day-page svg.day-page rect.outline').first().waitFor({ timeout: 60_000 });
    t.match(
      await page.locator('#day-page-h').textContent(),
      /merriam-webster\.com's results outlined/,
      'says what it shows',
    );
    t.equal(
      await page.locator('#day-page svg.day-page image').getAttribute('href'),
      `/admin/api/jobs/${jobId}/screenshot`,
      "the search's page",
    );
    const position = Number(await dot.getAttribute('data-position'));
    const outlined = await page
      .locator('#day-page rect.outline')
      .evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-position'))));
    t.ok(outlined.includes(position), `the result at #${position} is outlined (outlined: ${outlined.join(', ')})`);
    // the image itself loads (the route answers a PNG to the dashboard's session)
    const shot = await page.evaluate(async (id) => {
      const res = await fetch(`/admin/api/jobs/${id}/screenshot`, { credentials: 'same-origin' });
      return { status: res.status, type: res.headers.get('content-type') };
    }, jobId);
    t.same(shot, { status: 200, type: 'image/png' }, 'the page image answers to the session');
    await page.locator('#day-page').screenshot({ path: join(SHOTS, '11-day-page.png') });
  });

  const path = join(SHOTS, '10-monitor.png');
  await page.locator('#monitor-detail').screenshot({ path });
  t.ok(existsSync(path), 'screenshot 10-monitor.png kept');
  t.same(problems, [], 'no failed call, no CSP violation, no script error');
});
