import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parse as parseCsv } from 'csv-parse/sync';
import t, { type Test } from 'tap';
import { createJetStreamEventStore } from '../../services/adapters/eventStore/jetstream.js';
import { startLocalCluster } from '../../services/cli/dev/cluster.js';
import { chromiumMissing, signedInDashboard } from '../support/chromium.js';
import { startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { natsConnect, natsUnavailable } from '../support/nats.js';
import { checks, monitorApi } from '../support/ranks.js';
import { cli, cliArgs, removeDir, startStack, tempDataDir, UNPACED } from '../support/service.js';

/**
 * A monitor with pixel positions (docs/rank-tracking.md) through the real service and real Chromium: the fake Google
 * answers the keyword's first search with a page where Wikipedia is the first result (on the first screen) and its
 * second with one where Wikipedia is sixth (below it). The points carry `pixels_from_top` and `above_the_fold`,
 * visibility its above-the-fold share, and the second run raises `fell_below_fold`: embedded, and on a cluster whose
 * dispatcher lays the page out from the object store (the checks in the log carry the fold). Embedded, the monitor is
 * created by `serp-api monitors create --pixel-positions`, and the fold is read back through each surface: the CLI's
 * list, table and CSV, the MCP server's `serp_rank_history`, and the dashboard's monitor view in Chromium.
 */
const KEYWORD = 'fold keyword';
const ADMIN_TOKEN = 'monitor-pixels-admin-token-0123456789';
const PAGES = [
  'serp/websearcher/2024-03-13_oscar-the-grouch_7d621e868493.html.gz', // en.wikipedia.org first
  'serp/websearcher/2024-03-13_define-judgement_4f4d0fed0592.html.gz', // en.wikipedia.org sixth
];

/** a monitor with pixel positions created through /v1, raising `fell_below_fold` only; its id */
const createThroughApi = async (t: Test, base: string, key: string) => {
  const created = await monitorApi(base, key).call('POST', '/monitors', {
    name: 'fold',
    keywords: [KEYWORD],
    domains: ['*.wikipedia.org'],
    depth: 10,
    schedule: 'daily',
    pixel_positions: true,
    alerts: { fell_below_fold: true },
  });
  t.equal(created.status, 201, `created: ${created.text.slice(0, 120)}`);
  t.equal(created.json.pixel_positions, true, 'the monitor answers its setting');
  t.same(created.json.alerts, { fell_below_fold: true }, 'and the alert it raises');
  return created.json.monitor_id as string;
};

type Alert = {
  alert_id: string;
  kind: string;
  keyword: string;
  domain: string;
  from_position: number;
  to_position: number;
};

/**
 * the monitor `create` makes, its two runs and what they recorded, on the service at `base`; the monitor's id and its
 * alerts once `fell_below_fold` is among them
 */
const exercise = async (
  t: Test,
  base: string,
  key: string,
  create: (t: Test, base: string, key: string) => Promise<string> = createThroughApi,
) => {
  const api = monitorApi(base, key);
  const id = await create(t, base, key);

  const first = await api.waitForHistory(id, (p) => checks(p) >= 1);
  t.match(
    first,
    [{ status: 'ranked', position: 1, above_the_fold: true, pixels_from_top: Number }],
    'the first search: first result, on the first screen',
  );
  t.ok(first[0]!.pixels_from_top! < 768, `its top within the desktop screen (${first[0]!.pixels_from_top} px)`);

  t.equal((await api.call('POST', `/monitors/${id}/runs`, {})).status, 202, 'a second run');
  const both = await api.waitForHistory(id, (p) => checks(p) >= 2);
  t.match(
    both[1],
    { status: 'ranked', position: 6, above_the_fold: false, pixels_from_top: Number },
    'the second search: sixth, below the first screen',
  );
  t.ok(both[1]!.pixels_from_top! >= 768, `its top below the fold (${both[1]!.pixels_from_top} px)`);

  // a run's alerts are appended together when it completes
  let alerts: Alert[] = [];
  for (let i = 0; i < 300 && !alerts.some((a) => a.kind === 'fell_below_fold'); i++) {
    await new Promise((r) => setTimeout(r, 100));
    alerts = (await api.call('GET', `/monitors/${id}/alerts`)).json.alerts;
  }
  t.match(
    alerts.filter((a) => a.kind === 'fell_below_fold'),
    [{ kind: 'fell_below_fold', keyword: KEYWORD, domain: '*.wikipedia.org', from_position: 1, to_position: 6 }],
    'the second run raised fell_below_fold',
  );

  const visibility = (await api.call('GET', `/monitors/${id}/visibility`)).json;
  const day = visibility.domains[0].days.at(-1);
  t.match(day, { keywords: 1, above_the_fold: 0, above_the_fold_share: 0 }, "the day's last search: none above");

  const csv = await api.call('GET', `/monitors/${id}/history?format=csv`);
  t.equal(csv.status, 200, 'the CSV answers');
  t.same(
    (parseCsv(csv.text, { columns: true }) as Array<Record<string, string>>).map((r) => [
      r.position,
      r.pixels_from_top,
      r.above_the_fold,
    ]),
    both.map((p) => [String(p.position), String(p.pixels_from_top), String(p.above_the_fold)]),
    "its rows carry the JSON history's fold",
  );
  return { id, alerts, points: both };
};

t.test(
  'a monitor with pixel_positions, created from the CLI, records the fold and alerts when it falls below',
  { skip: fixturesMissing() ?? chromiumMissing() },
  async (t) => {
    const stack = await startStack(t, {
      google: { queries: { [KEYWORD]: PAGES }, rotate: true },
      env: {
        SERP_MONITOR_TICK_MS: '200',
        SERP_MONITOR_SPREAD_MAX_S: '2',
        SERP_DRAIN_TIMEOUT_MS: '1000',
        SERP_ADMIN_TOKEN: ADMIN_TOKEN,
      },
    });
    const base = stack.svc.url;
    // minted as the dashboard's admin does, since the service has an admin token
    const minted = await fetch(`${base}/admin/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'pro', label: 'fold' }),
    });
    t.equal(minted.status, 201, 'a key minted');
    const { key, key_id: keyId } = (await minted.json()) as { key: string; key_id: string };
    const env = { SERP_API_KEY: key, SERP_API_BASE_URL: base };
    const dir = tempDataDir('serp-fold-cli');
    t.teardown(() => removeDir(dir));

    /** `serp-api monitors create … --pixel-positions`, then the alerts through /v1 (the CLI sets none) */
    const createFromCli = async (t: Test) => {
      const help = await cli(['monitors', 'create', '--help']);
      t.match(help, /--pixel-positions\s+lay each search out once/, "the CLI's help names the flag");
      const keywords = join(dir, 'keywords.txt');
      writeFileSync(keywords, `${KEYWORD}\n`);
      const args = ['monitors', 'create', '--name', 'fold', '--keywords', keywords, '--domain', '*.wikipedia.org'];
      const json = JSON.parse(await cli([...args, '--depth', '10', '--pixel-positions', '--json'], env));
      t.equal(json.pixel_positions, true, 'the monitor the CLI created records pixel positions');
      const patched = await monitorApi(base, key).call('PATCH', `/monitors/${json.monitor_id}`, {
        alerts: { fell_below_fold: true, min_move: 1 },
      });
      t.equal(patched.status, 200, `the fold and a rank alert on: ${patched.text.slice(0, 120)}`);
      return json.monitor_id as string;
    };
    const { id, alerts, points } = await exercise(t, base, key, createFromCli);

    await t.test('the CLI lists the setting and prints the fold of each search', async (t) => {
      t.match(
        await cli(['monitors', 'list'], env),
        new RegExp(`${id}  fold .*daily  pixel positions`),
        'list says the monitor records pixel positions',
      );
      const plain = await cli(
        [
          'monitors',
          'create',
          '--name',
          'plain',
          '--keywords',
          join(dir, 'keywords.txt'),
          '--domain',
          'example.com',
          '--schedule',
          'weekly',
        ],
        env,
      );
      t.notMatch(plain, /pixel positions/, 'a monitor without the flag does not say it');
      const table = await cli(['monitors', 'history', id], env);
      t.match(table, `*.wikipedia.org 1 (${points[0]!.pixels_from_top} px, above the fold)`, 'the first search');
      t.match(table, `*.wikipedia.org 6 (${points[1]!.pixels_from_top} px, below the fold)`, 'the second');
      const csv = parseCsv(await cli(['monitors', 'history', id, '--csv'], env), { columns: true }) as Array<
        Record<string, string>
      >;
      t.same(
        csv.map((r) => [r.pixels_from_top, r.above_the_fold]),
        points.map((p) => [String(p.pixels_from_top), String(p.above_the_fold)]),
        'its CSV carries the fold',
      );
    });

    await t.test('MCP serp_rank_history carries the fold of each measured search', async (t) => {
      const client = new Client({ name: 'fold-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { 'x-api-key': key } } }),
      );
      t.teardown(() => client.close());
      const { tools } = await client.listTools();
      t.match(
        tools.find((x) => x.name === 'serp_rank_history')?.description,
        /pixels_from_top, above_the_fold.*above_the_fold_share/,
        'the tool says what it carries',
      );
      const res = (await client.callTool({ name: 'serp_rank_history', arguments: { monitor_id: id } })) as unknown as {
        isError?: boolean;
        content: Array<{ text: string }>;
        structuredContent: { series: Array<{ points: unknown[][]; above_the_fold_share?: number }> };
      };
      t.notOk(res.isError, 'answered');
      const [series] = res.structuredContent.series;
      t.same(
        series?.points,
        points.map((p) => [
          p.checked_at,
          p.position,
          { pixels_from_top: p.pixels_from_top, above_the_fold: p.above_the_fold },
        ]),
        "the history's points, each with its fold",
      );
      t.equal(series?.above_the_fold_share, 0.5, 'above the fold in one of the two searches');
      t.match(
        res.content[0]?.text,
        /above the fold in 50 %.*\(\d+ px, above the fold\).*\(\d+ px, below the fold\)/,
        'its text says the share and where each search lay',
      );
    });

    await t.test("the dashboard's monitor view shows the fold share and marks the fold alert apart", async (t) => {
      const page = await signedInDashboard(t, base, ADMIN_TOKEN);
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      await page.locator(`[data-view="${keyId}"]`).click();
      await page.locator(`[data-monitor="${id}"]`).click();
      await page.locator('#alerts-table tbody tr[data-alert]').first().waitFor();
      const vis = (await monitorApi(base, key).call('GET', `/monitors/${id}/visibility`)).json;
      const day = vis.domains[0].days.at(-1);
      const row = page.locator('#visibility-table tbody tr', { hasText: day.date });
      t.equal(
        await row.locator('td[data-fold]').textContent(),
        `${(day.above_the_fold_share * 100).toFixed(1)} % (${day.above_the_fold})`,
        "the day's above-the-fold share, as /v1 gives it",
      );
      t.match(await page.locator('#visibility-table thead').textContent(), /Above the fold/, 'in a column of its own');
      const fold = alerts.find((a) => a.kind === 'fell_below_fold')!;
      const moved = alerts.find((a) => a.kind === 'moved');
      t.ok(moved, 'the same run raised a rank alert (moved)');
      const foldRow = page.locator(`#alerts-table tr[data-alert="${fold.alert_id}"]`);
      t.equal(await foldRow.getAttribute('class'), 'fold-alert', 'the fold alert is marked');
      t.match(await foldRow.textContent(), /fell below the fold/, 'and said in words');
      t.equal(
        await page.locator(`#alerts-table tr[data-alert="${moved!.alert_id}"]`).getAttribute('class'),
        null,
        'the rank alert is not',
      );
      t.equal(
        await page.locator(`#positions-chart polygon.fold-mark[data-alert="${fold.alert_id}"]`).count(),
        1,
        'the fold alert is a fold mark on the chart',
      );
      t.equal(
        await page
          .locator(`#positions-chart polygon.alert-mark:not(.fold-mark)[data-alert="${moved!.alert_id}"]`)
          .count(),
        1,
        'on the chart, the fold alert is marked apart from the rank alert',
      );
      t.match(
        await page.locator('#positions-chart figcaption').textContent(),
        /alert \(1\).*fell below the fold \(1\)/,
        'the legend counts them apart',
      );
      const colour = await page.locator(`#positions-chart polygon.fold-mark`).evaluate((e) => getComputedStyle(e).fill);
      t.not(
        colour,
        await page
          .locator('#positions-chart polygon.alert-mark:not(.fold-mark)')
          .first()
          .evaluate((e) => getComputedStyle(e).fill),
        'in a colour of its own',
      );
      t.same(problems, [], 'no script error');
    });
  },
);

t.test(
  'distributed: the dispatcher lays the page out from the object store',
  { skip: natsUnavailable() ?? fixturesMissing() ?? chromiumMissing(), timeout: 600_000 },
  async (t) => {
    const google = await startFakeGoogle({ queries: { [KEYWORD]: PAGES }, rotate: true });
    const dir = tempDataDir('serp-fold-cluster');
    const cluster = await startLocalCluster({
      dir,
      log: () => undefined,
      apis: 1,
      crawlers: 1,
      env: {
        SERP_GOOGLE_ORIGIN: google.origin,
        SERP_FETCHER: 'http',
        ...UNPACED,
        SERP_LOG_LEVEL: 'warn',
        SERP_MONITOR_TICK_MS: '200',
        SERP_MONITOR_SPREAD_MAX_S: '2',
      },
      command: [process.execPath, ...cliArgs],
    });
    const es = await createJetStreamEventStore({ nc: await natsConnect(cluster.nats.urls), ownsConnection: true });
    t.teardown(async () => {
      await es.close();
      await cluster.stop();
      await google.close();
      removeDir(dir);
    });
    const base = cluster.apiUrls[0]!;
    const minted = await fetch(`${base}/admin/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cluster.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'pro', label: 'fold cluster' }),
    });
    t.equal(minted.status, 201, 'a key minted');
    const { key } = (await minted.json()) as { key: string };
    await exercise(t, base, key);
    // the fold is in the log: the checks carry it, so a rebuild of any node's read models gives it back
    const folds = (await es.readAll({ fromPosition: 0, maxCount: 100_000 }))
      .filter((e) => e.type === 'MonitorKeywordChecked')
      .map((e) => (e.data as { ranks: Array<{ aboveTheFold?: boolean }> }).ranks[0]?.aboveTheFold);
    t.same(folds, [true, false], 'the checks in the log carry the fold');
  },
);
