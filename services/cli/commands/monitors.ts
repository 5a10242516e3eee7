import { existsSync, readFileSync } from 'node:fs';
import { type Command, InvalidArgumentError } from 'commander';
import type { HistoryPoint } from '../../../contracts/monitors.js';
import { rankChart } from '../rankChart.js';
import { SERVICE_OPTIONS, serviceClient } from '../serviceClient.js';

/**
 * `serp-api monitors create|list|run|history` (docs/rank-tracking.md): a client of a running service's /v1/monitors,
 * with the key from --key or SERP_API_KEY.
 */

const withClient = (cmd: Command) =>
  cmd
    .option(...SERVICE_OPTIONS.baseUrl)
    .option(...SERVICE_OPTIONS.key)
    .option(...SERVICE_OPTIONS.data);

const collect = (v: string, list: string[] = []) => [...list, v];
const depthArg = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 10 || n > 100) throw new InvalidArgumentError('depth is 10–100');
  return n;
};

/** keywords of FILE: one a line; empty lines, `#` comments and repeats skipped (as `batch` reads its file) */
const keywordsOf = (file: string) => {
  if (!existsSync(file)) throw new InvalidArgumentError(`no file ${file}`);
  const seen = new Set<string>();
  for (const line of readFileSync(file, 'utf8').split(/\r?\n/)) {
    const k = line.trim().replace(/\s+/g, ' ');
    if (k && !k.startsWith('#')) seen.add(k);
  }
  return [...seen];
};

/** a point measured in pixels (docs/rank-tracking.md#pixel-positions): where its best result lay against the fold */
const foldText = (p: HistoryPoint) => {
  if (p.above_the_fold === undefined) return '';
  const px = p.pixels_from_top === null || p.pixels_from_top === undefined ? '' : `${p.pixels_from_top} px, `;
  return ` (${px}${p.above_the_fold ? 'above' : 'below'} the fold)`;
};

const printHistory = (points: HistoryPoint[], chart: boolean) => {
  const keywords = [...new Set(points.map((p) => p.keyword))];
  for (const keyword of keywords) {
    const mine = points.filter((p) => p.keyword === keyword);
    const times = [...new Set(mine.map((p) => p.checked_at))];
    const domains = [...new Set(mine.map((p) => p.domain))];
    console.log(`\n${keyword}`);
    const series = domains.map((d) => ({
      label: d,
      values: times.map((t) => {
        const p = mine.find((q) => q.domain === d && q.checked_at === t);
        if (!p) return undefined;
        return p.status === 'ranked' && p.position !== null ? p.position : (p.status as 'not_ranked' | 'failed');
      }),
    }));
    if (chart) console.log(rankChart(series, times));
    for (const t of times) {
      const cells = series.map((s) => {
        const v = s.values[times.indexOf(t)];
        const p = mine.find((q) => q.domain === s.label && q.checked_at === t);
        return `${s.label} ${v === undefined ? '–' : v === 'not_ranked' ? 'not ranked' : v}${p ? foldText(p) : ''}`;
      });
      console.log(`  ${t.slice(0, 16).replace('T', ' ')}  ${cells.join('  ')}`);
    }
  }
};

export const registerMonitorsCommand = (program: Command) => {
  const monitors = program
    .command('monitors')
    .description('rank tracking: monitors that search keywords on a schedule');

  withClient(monitors.command('create'))
    .description('create a monitor (the first --domain is yours, the others competitors)')
    .requiredOption('--name <name>', 'what to call it')
    .requiredOption('--keywords <file>', 'one keyword a line')
    .requiredOption('--domain <domain>', 'a tracked domain (repeat: yours first)', collect)
    .option('--schedule <s>', 'hourly, daily, weekly, or a five-field cron', 'daily')
    .option('--timezone <tz>', "the cron's time zone (IANA)", 'UTC')
    .option('--location <place>', 'as /v1/search: "Austin, Texas, United States"')
    .option('--device <d>', 'desktop, mobile or tablet')
    .option('--gl <gl>', 'country code')
    .option('--hl <hl>', 'language code')
    .option('--depth <n>', 'results examined, 10–100 (default 100)', depthArg)
    .option('--backfill', "turn this key's earlier searches of these keywords into history")
    .option(
      '--pixel-positions',
      'lay each search out once (one render a search): points carry pixels_from_top and above_the_fold',
    )
    .option('--json', 'print the monitor as JSON')
    .action(async (o) => {
      const preset = ['hourly', 'daily', 'weekly'].includes(o.schedule);
      const res = await (await serviceClient(o)).createMonitor({
        name: o.name,
        keywords: keywordsOf(o.keywords),
        domains: o.domain,
        schedule: preset ? o.schedule : { cron: o.schedule, timezone: o.timezone },
        ...(o.location ? { location: o.location } : {}),
        ...(o.device ? { device: o.device } : {}),
        ...(o.gl ? { gl: o.gl } : {}),
        ...(o.hl ? { hl: o.hl } : {}),
        ...(o.depth ? { depth: o.depth } : {}),
        ...(o.backfill ? { backfill: true } : {}),
        ...(o.pixelPositions ? { pixel_positions: true } : {}),
      });
      const m = res.body;
      if (o.json) return console.log(JSON.stringify(m, null, 2));
      console.log(
        `created ${m.monitor_id}: ${(m.keywords as string[]).length} keywords${m.pixel_positions ? ', pixel positions' : ''}, next run ${m.next_run_at}`,
      );
    });

  withClient(monitors.command('list'))
    .description("this key's monitors")
    .option('--json', 'print JSON')
    .action(async (o) => {
      const list = await (await serviceClient(o)).monitors();
      if (o.json) return console.log(JSON.stringify(list, null, 2));
      if (list.length === 0) return console.log('no monitors');
      for (const m of list) {
        const schedule = typeof m.schedule === 'string' ? m.schedule : JSON.stringify(m.schedule);
        console.log(
          `${m.monitor_id}  ${m.name}  ${(m.keywords as string[]).length} keywords  ${(m.domains as string[]).join(', ')}  ${schedule}${m.pixel_positions ? '  pixel positions' : ''}${m.paused ? ' (paused)' : ''}  last ${m.last_run_at ?? '–'}  next ${m.next_run_at ?? '–'}`,
        );
      }
    });

  withClient(monitors.command('run'))
    .description('search every keyword of a monitor now')
    .argument('<id>', 'monitor id')
    .option('--json', 'print JSON')
    .action(async (id: string, o) => {
      const res = await (await serviceClient(o)).runMonitor(id);
      if (o.json) return console.log(JSON.stringify(res.body, null, 2));
      const jobs = res.body.jobs as Array<{ keyword: string; job_id: string; submit_at: string }>;
      console.log(
        `run ${res.body.run_id}: ${jobs.length} searches, the last submitted at ${jobs[jobs.length - 1]?.submit_at}`,
      );
    });

  withClient(monitors.command('history'))
    .description('positions over time, with a small chart on a terminal')
    .argument('<id>', 'monitor id')
    .option('--keyword <k>', 'only this keyword')
    .option('--domain <d>', 'only this domain')
    .option('--from <date>', 'ISO date or instant')
    .option('--to <date>', 'ISO date or instant')
    .option(
      '--csv',
      'the whole history as CSV (header keyword,domain,checked_at,status,position,url,failure,job_id,pixels_from_top,above_the_fold)',
    )
    .option('--json', 'print the JSON body')
    .option('--chart', 'draw the chart even when stdout is not a terminal')
    .action(async (id: string, o) => {
      const q = new URLSearchParams();
      for (const k of ['keyword', 'domain', 'from', 'to'] as const) if (o[k]) q.set(k, o[k]);
      const client = await serviceClient(o);
      if (o.csv) {
        q.set('format', 'csv');
        const res = await client.raw(`/v1/monitors/${encodeURIComponent(id)}/history?${q}`);
        if (!res.ok)
          throw new Error(((await res.json().catch(() => ({}))) as { detail?: string }).detail ?? `HTTP ${res.status}`);
        process.stdout.write(await res.text());
        return;
      }
      const body = await client.history(id, q);
      if (o.json) return console.log(JSON.stringify(body, null, 2));
      printHistory(body.points, Boolean(o.chart || process.stdout.isTTY));
    });
};
