import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import t from 'tap';
import { chromiumMissing, chromiumPath } from '../support/chromium.js';
import { withinOneMinute } from '../support/clock.js';
import { fixturesMissing } from '../support/fixtures.js';
import { CHROMIUM_LOOPBACK_ARG } from '../support/loopback.js';
import { pollJob, startStack, submit } from '../support/service.js';
import { startReceiver } from '../support/webhookReceiver.js';

/**
 * The admin dashboard in Chromium (playwright-core), against a real service on a listening port: sign in,
 * a wrong token, mint (the key works on /v1 at once), change limits (the next request obeys them), revoke with a
 * confirmation (401 on the key's next call), the per-key and service views, CSRF and CSP. Screenshots of each screen
 * are written to test/.artifacts/dashboard/ (kept, not committed).
 */
const skip = fixturesMissing() ?? chromiumMissing();

const ADMIN_TOKEN = 'dashboard-test-admin-token-0123456789';
const SHOTS = join(import.meta.dirname, '..', '.artifacts', 'dashboard');

t.test('admin dashboard in Chromium', { skip }, async (t) => {
  mkdirSync(SHOTS, { recursive: true });
  // the service view counts a cache answer given to another key: this stack's cache is shared (docs/security.md)
  const stack = await startStack(t, {
    env: {
      SERP_ADMIN_TOKEN: ADMIN_TOKEN,
      SERP_CACHE_SCOPE: 'shared',
      // a webhook to a receiver that answers 503: its delivery waits in the outbox the service view shows
      SERP_WEBHOOK_ALLOW_PRIVATE: '1',
      SERP_WEBHOOK_ALLOW_HTTP: '1',
    },
  });
  const base = stack.svc.url;
  const browser: Browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--no-sandbox', CHROMIUM_LOOPBACK_ARG],
  });
  t.teardown(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page: Page = await context.newPage();
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  const mintByApi = async (body: Record<string, unknown>) =>
    (await (
      await fetch(`${base}/admin/api/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json()) as { key: string; key_id: string };
  const shot = async (name: string) => {
    const path = join(SHOTS, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    t.ok(existsSync(path), `screenshot ${name}.png kept`);
  };

  await t.test('a wrong token is refused on the sign-in form', async (t) => {
    const res = await page.goto(`${base}/admin`);
    t.equal(res?.status(), 200);
    t.match(res?.headers()['content-security-policy'], /script-src 'self'/, 'strict CSP on the page');
    t.notMatch(res?.headers()['content-security-policy'], /unsafe-inline/);
    await shot('01-sign-in');
    await page.getByLabel('Admin token').fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    t.match(await page.getByRole('alert').textContent(), /not the admin token/);
    t.notOk(
      (await context.cookies()).some((c) => c.name === 'serp_admin'),
      'no session cookie for a wrong token',
    );
    t.notMatch(page.url(), /token/, 'the token is never in the URL');
    await shot('02-wrong-token');
  });

  await t.test('signs in with the token into an HttpOnly, SameSite=Strict cookie', async (t) => {
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Keys' }).waitFor();
    t.equal(new URL(page.url()).pathname, '/admin');
    const session = (await context.cookies()).find((c) => c.name === 'serp_admin');
    t.ok(session, 'session cookie set');
    t.match(session, { httpOnly: true, sameSite: 'Strict', path: '/admin' });
    t.notOk(session?.value.includes(ADMIN_TOKEN), 'the cookie does not hold the token');
    t.notOk(await page.evaluate(() => document.cookie.includes('serp_admin')), 'scripts cannot read it');
    t.equal(await page.locator('script:not([src])').count(), 0, 'no inline script');
    await page.locator('#keys-table tbody tr').first().waitFor();
  });

  let minted = '';
  let keyId = '';
  await t.test('mints a key, shows it once, and it works on /v1 at once', async (t) => {
    await page.getByLabel('Label').fill('dashboard test');
    await page.getByLabel('Rate per minute').first().fill('30');
    await page.getByRole('button', { name: 'Mint' }).click();
    await page.locator('#minted:not([hidden])').waitFor();
    minted = (await page.locator('#minted-key').textContent()) ?? '';
    t.match(minted, /^sk_[0-9A-Za-z]{32}$/, 'the raw key is shown');
    await page.locator('#keys-table tbody tr', { hasText: 'dashboard test' }).waitFor();
    await shot('03-minted');
    // The rate test below counts this search against a limit of 1 per minute, and the limiter's windows are whole
    // clock minutes: this search and that one (~10 s apart) must fall in the same minute, not either side of one.
    await withinOneMinute(20_000);
    const res = await submit(base, minted, { keyword: 'coffee' });
    t.equal(res.status, 202, 'the new key submits a search');
    const job = (await res.json()) as { job_id: string };
    const done = await pollJob(base, minted, job.job_id);
    t.equal(done.status, 200);
    await page.reload();
    await page.locator('#keys-table tbody tr', { hasText: 'dashboard test' }).waitFor();
    t.ok(await page.locator('#minted').isHidden(), 'after a reload the key is not shown again');
    t.notOk((await page.content()).includes(minted), 'nor anywhere in the page');
    const listed = (await (
      await fetch(`${base}/admin/api/keys`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    ).json()) as { keys: Array<{ key_id: string; label?: string; used_this_month: number }> };
    const mine = listed.keys.find((k) => k.label === 'dashboard test');
    keyId = mine?.key_id ?? '';
    t.equal(mine?.used_this_month, 1, 'the table counts the search');
  });

  await t.test('the filter narrows the table', async (t) => {
    await mintByApi({ tier: 'free', label: 'someone else' });
    await page.reload();
    await page.locator('#keys-table tbody tr', { hasText: 'someone else' }).waitFor();
    await page.getByLabel('Filter').fill('dashboard');
    t.equal(await page.locator('#keys-table tbody tr').count(), 1);
    t.match(await page.locator('#keys-table tbody').textContent(), /dashboard test/);
    await page.getByLabel('Filter').fill('');
  });

  await t.test("a key's 30 days and recent jobs", async (t) => {
    await page
      .locator('#keys-table tbody tr', { hasText: 'dashboard test' })
      .getByRole('button', { name: 'Details' })
      .click();
    await page.locator('#jobs-table tbody tr', { hasText: 'coffee' }).waitFor();
    t.match(await page.locator('#jobs-table tbody').textContent(), /done/);
    t.equal(await page.locator('#usage-chart svg rect').count(), 1, "one bar: today's one charged search");
    t.match(
      await page.locator('#usage-chart svg').getAttribute('aria-label'),
      /1 in all/,
      'the chart has a text alternative',
    );
    await shot('04-key-detail');
  });

  await t.test('changing limits applies from the next request', async (t) => {
    const form = page.locator('#limits');
    await form.getByLabel('Rate per minute').fill('1');
    await form.getByRole('button', { name: 'Save limits' }).click();
    await page.getByRole('status').filter({ hasText: 'saved' }).waitFor();
    const res = await submit(base, minted, { keyword: 'tea' });
    t.equal(res.status, 429, 'rate 1/min: the second search this minute is refused');
    await shot('05-limits-changed');
  });

  await t.test('revoking asks first, then the next call is 401', async (t) => {
    const row = page.locator('#keys-table tbody tr', { hasText: 'dashboard test' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    t.match(await dialog.textContent(), /cannot be undone/);
    await shot('06-revoke-confirm');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    t.match(await row.textContent(), /active/, 'Escape cancels: still active');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await page.locator('#keys-table tbody tr', { hasText: 'dashboard test' }).filter({ hasText: 'revoked' }).waitFor();
    const res = await fetch(`${base}/v1/usage`, { headers: { 'x-api-key': minted } });
    t.equal(res.status, 401, 'the revoked key is refused on its next call');
    const listed = (await (
      await fetch(`${base}/admin/api/keys`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    ).json()) as { keys: Array<{ key_id: string; status: string }> };
    t.equal(listed.keys.find((k) => k.key_id === keyId)?.status, 'revoked', 'the admin api agrees');
    await shot('07-revoked');
  });

  await t.test('the service view: outcomes per hour, cache hit rate, queue, projection lag, outbox', async (t) => {
    // a second identical search, by another key, is answered from cache (SERP_CACHE_SCOPE=shared above); that key
    // has a webhook whose receiver answers 503, so its search.completed waits in the outbox for a retry (5 s)
    const other = await mintByApi({ tier: 'free' });
    const receiver = await startReceiver();
    t.teardown(() => receiver.close());
    receiver.setAnswer(() => ({ status: 503 }));
    const hook = await fetch(`${base}/v1/webhooks`, {
      method: 'POST',
      headers: { 'x-api-key': other.key, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${receiver.origin}/hook`, events: ['search.completed'] }),
    });
    t.equal(hook.status, 201, 'the webhook is registered');
    const res = await submit(base, other.key, { keyword: 'coffee' });
    t.equal(res.status, 200, 'answered from cache');
    let outbox = { pending: 0, retrying: 0 };
    for (let i = 0; i < 100 && outbox.retrying === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const read = await fetch(`${base}/admin/api/service`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      outbox = ((await read.json()) as { webhook_outbox: typeof outbox }).webhook_outbox;
    }
    t.match(outbox, { pending: 1, retrying: 1 }, 'the refused delivery waits for its retry');
    await page.reload();
    await page.locator('#hours-table tbody tr').first().waitFor();
    await page.locator('#service').scrollIntoViewIfNeeded();
    t.match(await page.locator('#cache-rate').textContent(), /%/);
    t.match(await page.locator('#queue-depth').textContent(), /waiting/);
    t.match(await page.locator('#projection-lag').textContent(), /events/);
    t.match(await page.locator('#outbox-depth').textContent(), /^1 waiting \(0 due, 1 retrying, 0 sending\)$/);
    t.match(await page.locator('#outbox-age').textContent(), /^\d{4}-\d\d-\d\d \d\d:\d\d$/);
    const hours = await page.locator('#hours-table tbody').textContent();
    t.match(hours, /\d/, 'this hour is listed');
    const view = (await (
      await fetch(`${base}/admin/api/service`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    ).json()) as { hours: Array<{ done: number; cached: number; submitted: number }>; cache_hit_rate: number };
    const total = view.hours.reduce((n, h) => ({ done: n.done + h.done, cached: n.cached + h.cached }), {
      done: 0,
      cached: 0,
    });
    t.same(total, { done: 1, cached: 1 }, 'one crawl done, one answer from cache');
    t.equal(view.cache_hit_rate, 1 / 2, 'one of two submits answered from cache (the refused one was never submitted)');
    const routes = await page.locator('#routes-table tbody tr').first().textContent();
    t.match(routes, /^direct/, 'the routes table lists the route the crawl went through');
    t.match(routes, /unpaced/, 'with its pace (none here: tests run unpaced unless about the fleet)');
    await shot('08-service');
  });

  await t.test('a write by cookie without the CSRF token is refused', async (t) => {
    const cookie = (await context.cookies())
      .filter((c) => c.name === 'serp_admin')
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
    const res = await fetch(`${base}/admin/api/keys`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'free' }),
    });
    t.equal(res.status, 403);
    t.match(await res.json(), { code: 'SERP_ADMIN_CSRF', detail: /reload \/admin/ });
    const read = await fetch(`${base}/admin/api/keys`, { headers: { cookie } });
    t.equal(read.status, 200, 'reads by cookie need no token');
    const none = await fetch(`${base}/admin/api/keys`);
    t.equal(none.status, 401, 'no cookie, no token: 401');
    const signIn = await fetch(`${base}/admin/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: ADMIN_TOKEN }).toString(),
      redirect: 'manual',
    });
    t.equal(
      signIn.status,
      403,
      'a sign-in posted from anywhere but the form (no form token) is refused, right token or not',
    );
    t.notOk(signIn.headers.get('set-cookie')?.includes('serp_admin='), 'and signs no one in');
  });

  await t.test('signs out, and the session ends on the server: its cookie, replayed, is refused', async (t) => {
    const copied = (await context.cookies())
      .filter((c) => c.name === 'serp_admin' || c.name === '_csrf')
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
    const csrf = await page.locator('meta[name="csrf-token"]').getAttribute('content');
    t.equal((await fetch(`${base}/admin/api/keys`, { headers: { cookie: copied } })).status, 200, 'before: signed in');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    t.notOk(
      (await context.cookies()).some((c) => c.name === 'serp_admin'),
      'the session cookie is gone',
    );
    t.equal(
      (await fetch(`${base}/admin/api/keys`, { headers: { cookie: copied } })).status,
      401,
      'the copied cookie lists no keys',
    );
    const mint = await fetch(`${base}/admin/api/keys`, {
      method: 'POST',
      headers: { cookie: copied, 'x-csrf-token': csrf ?? '', 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'free' }),
    });
    t.equal(mint.status, 401, 'and mints none');
  });

  t.same(cspViolations, [], 'no CSP violation on any page');
  t.same(pageErrors, [], 'no script error');
});
