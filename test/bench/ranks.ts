/**
 * Rank tracking's read model (docs/rank-tracking.md), made through the real projection from events:
 *   npx tsx test/bench/ranks.ts [keywords=1000] [days=365] [domains=3]
 * A monitor of `keywords` keywords × `domains` domains with a daily run for `days` days: MonitorKeywordChecked events
 * appended to an embedded event store, then `projections rebuild` (points/s), the read model's bytes per point, one
 * keyword's year for one domain (p50/p99 over 200 reads), visibility over the last 90 days, and the whole history as
 * CSV (rows/s, heap high-water mark), each beside the goal of docs/rank-tracking.md. Three figures have a baseline in
 * the same run, sides alternated (test/bench/compare.ts): the rebuild against committing every read of 1,000 events
 * (how rebuilds committed before), visibility from the day documents against visibility from the history's own
 * documents (how the route computed it before; test/support/rankVisibility.ts), the CSV against making every point
 * and formatting it (how the route made CSV before); no ratio when the two sides' answers differ. Prints figures,
 * asserts nothing.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { allProjections, readModelQueries } from '../../projections/index.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';
import { csvChunks, csvRow } from '../../services/monitors/views/monitorReads.js';
import { REBUILD_BATCHING, type RebuildBatching, rebuildReadModels } from '../../services/projector/projector.js';
import { visibilityFromHistory } from '../support/rankVisibility.js';
import { alternate, type Figure, machineNote, medianOf, ratio, total } from './compare.js';

const [keywords = 1000, days = 365, domainCount = 3] = process.argv.slice(2).map(Number);
const dir = mkdtempSync(join(tmpdir(), 'serp-bench-ranks-'));
const monitorId = 'mon_bench';
const domains = ['example.com', 'rival.com', 'other.org'].slice(0, domainCount);
const start = Date.parse('2025-01-01T00:00:00.000Z');
const es = createSqliteEventStore({ path: join(dir, 'events.db') });
const rm = createSqliteReadModelStore(join(dir, 'read.db'));
let seed = 7;
const rand = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};

const t0 = Date.now();
for (let d = 0; d < days; d++) {
  const runId = `run_${String(d).padStart(24, '0')}`;
  const events = Array.from({ length: keywords }, (_, k) => {
    const at = new Date(start + d * 86_400_000 + k * 1000).toISOString();
    const failed = rand() < 0.01;
    return {
      type: 'MonitorKeywordChecked',
      data: {
        runId,
        monitorId,
        keyword: `keyword ${k}`,
        jobId: (start + d * 86_400_000 + k).toString(16).padStart(12, '0') + String(k).padStart(12, '0'),
        checkedAt: at,
        ok: !failed,
        ...(failed ? { failure: 'captcha' } : {}),
        ranks: domains.map((domain, i) => {
          const pos = Math.floor(rand() * 120) + 1;
          return pos > 100 || failed
            ? { domain, features: [] }
            : {
                domain,
                position: pos,
                url: `https://${domain}/page-${k % 7}-${i}`,
                features: rand() < 0.1 ? ['ai_overview_citation'] : [],
              };
        }),
        recordedAt: at,
      },
    };
  });
  await es.appendToStream(`monitorRun-${runId}`, events);
}
const points = keywords * days * domains.length;
console.log(`appended ${keywords * days} checks (${points} points) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

const goals: string[] = [];
const report = (what: string, figure: string, goal: string, met: boolean, extra = '') => {
  const line = `${what}: ${figure} (goal ${goal}: ${met ? 'met' : 'NOT met'})${extra ? `; ${extra}` : ''}`;
  goals.push(line);
  console.log(line);
};

// rebuild, alternated (test/bench/compare.ts): the previous batching (a commit per read of 1,000 events) and the current
const rebuildSide = (batching: RebuildBatching) => async (): Promise<Figure> => {
  const r0 = performance.now();
  await rebuildReadModels(es, rm, allProjections, undefined, batching);
  return { value: points / ((performance.now() - r0) / 1000), failures: 0 };
};
const rebuilds = await alternate(
  2,
  { batched: rebuildSide(REBUILD_BATCHING), baseline: rebuildSide({ events: 1, docs: Number.POSITIVE_INFINITY }) },
  (round, r) =>
    console.log(
      `  rebuild round ${round + 1}: batched ${r.batched.value.toFixed(0)}, baseline ${r.baseline.value.toFixed(0)} points/s`,
    ),
);
const mean = (figures: Figure[]): Figure => {
  const sum = total(figures);
  return { value: sum.value / figures.length, failures: sum.failures };
};
const rebuilt = mean(rebuilds.batched);
const rebuiltBase = mean(rebuilds.baseline);
report(
  'projections rebuild',
  `${rebuilt.value.toFixed(0)} points/s`,
  '≥ 50,000 points/s',
  rebuilt.value >= 50_000,
  `${ratio(rebuilt, rebuiltBase, ['batched', 'baseline'])} the baseline (a commit per read of 1,000 events: ${rebuiltBase.value.toFixed(0)} points/s)`,
);

rm.compact();
const docsBytes = rm
  .dump()
  .filter((d) => d.view === 'rankHistory' || d.view === 'rankBest' || d.view === 'rankDays')
  .reduce((n, d) => n + d.doc.length + d.id.length + d.view.length, 0);
const fileBytes = statSync(join(dir, 'read.db')).size / points;
report(
  'read model per point',
  `${(docsBytes / points).toFixed(1)} bytes of documents`,
  '≤ 150 bytes',
  docsBytes / points <= 150,
  `read.db ${fileBytes.toFixed(1)} bytes per point (the whole file, every view and SQLite's overhead)`,
);

const q = readModelQueries(rm);
const year = { from: start, to: start + days * 86_400_000 };
const times: number[] = [];
for (let i = 0; i < 200; i++) {
  const k = Math.floor(rand() * keywords);
  const s = performance.now();
  let n = 0;
  for (const batch of q.ranks.points(monitorId, year, { keyword: `keyword ${k}`, domain: 'example.com' }))
    n += batch.length;
  times.push(performance.now() - s);
  if (n !== days) throw new Error(`expected ${days} points, got ${n}`);
}
times.sort((a, b) => a - b);
report(
  `one keyword's ${days} days for one domain`,
  `p99 ${times[197].toFixed(2)} ms`,
  '≤ 20 ms',
  times[197] <= 20,
  `p50 ${times[100].toFixed(2)} ms, 200 reads`,
);

// visibility, alternated: from the history's documents (the baseline: how the route computed it before) and from the
// day documents; a round whose answer differs from the baseline's counts as a failure (no ratio then)
const visDays = Math.min(90, days);
const visRange = { from: start + (days - visDays) * 86_400_000, to: year.to };
let visBaseline: unknown;
let visDayCount = 0;
const visSide = (side: 'history' | 'days') => async (): Promise<Figure & { answer: unknown; cpuMs: number }> => {
  const c0 = process.cpuUsage();
  const v0 = performance.now();
  const answer =
    side === 'days' ? q.ranks.visibility(monitorId, visRange) : visibilityFromHistory(rm, monitorId, visRange);
  const ms = performance.now() - v0;
  const cpu = process.cpuUsage(c0);
  if (side === 'history') visBaseline = answer;
  else visDayCount = (answer as ReturnType<typeof q.ranks.visibility>).keywordsOfDay.size;
  return { value: ms, failures: 0, answer, cpuMs: (cpu.user + cpu.system) / 1000 };
};
const visRuns = await alternate(3, { history: visSide('history'), days: visSide('days') }, (round, r) =>
  console.log(
    `  visibility round ${round + 1}: day documents ${r.days.value.toFixed(0)} ms (CPU ${r.days.cpuMs.toFixed(0)} ms), history ${r.history.value.toFixed(0)} ms (CPU ${r.history.cpuMs.toFixed(0)} ms)`,
  ),
);
const visDiffering = visRuns.days.filter((f) => !isDeepStrictEqual(f.answer, visBaseline)).length;
const vis = { ...medianOf(visRuns.days), failures: visDiffering };
const visBase = medianOf(visRuns.history);
report(
  `visibility, whole monitor, ${visDays} days`,
  `${vis.value.toFixed(0)} ms (median of 3; slowest ${Math.max(...visRuns.days.map((f) => f.value)).toFixed(0)} ms; CPU ${medianOf(visRuns.days.map((f) => ({ value: f.cpuMs, failures: 0 }))).value.toFixed(0)} ms by median, what a loaded machine's wall time hides)`,
  '≤ 250 ms',
  vis.value <= 250,
  `${ratio(visBase, vis, ['history', 'day documents (an answer differing from the history’s)'])} faster than from the history's documents (${visBase.value.toFixed(0)} ms); ${visDayCount} days`,
);

// CSV, alternated: every point made then formatted (the baseline), and rows straight from the stored checks; a side
// whose text differs from the other's counts as a failure (no ratio then)
let baselineDigest = '';
let peak = 0;
const csvSide = (side: 'baseline' | 'direct') => async (): Promise<Figure & { digest: string }> => {
  const chunks =
    side === 'direct'
      ? csvChunks(q.ranks.monthChecks(monitorId, year))
      : (function* () {
          for (const batch of q.ranks.points(monitorId, year)) {
            let chunk = '';
            for (const p of batch) chunk += csvRow(p);
            yield chunk;
          }
        })();
  const hash = createHash('sha1');
  const heap0 = process.memoryUsage().heapUsed;
  let high = heap0;
  const c0 = performance.now();
  for (const chunk of chunks) {
    hash.update(chunk);
    high = Math.max(high, process.memoryUsage().heapUsed);
  }
  const s = (performance.now() - c0) / 1000;
  const digest = hash.digest('hex');
  if (side === 'baseline') baselineDigest = digest;
  else peak = Math.max(peak, high - heap0);
  return { value: points / s, failures: 0, digest };
};
const csvRuns = await alternate(2, { baseline: csvSide('baseline'), direct: csvSide('direct') }, (round, r) =>
  console.log(
    `  CSV round ${round + 1}: direct ${r.direct.value.toFixed(0)}, baseline ${r.baseline.value.toFixed(0)} rows/s`,
  ),
);
const differing = csvRuns.direct.filter((f) => f.digest !== baselineDigest).length;
const csv = { ...mean(csvRuns.direct), failures: differing };
const csvBase = mean(csvRuns.baseline);
report(
  'CSV of the whole history',
  `${csv.value.toFixed(0)} rows/s`,
  '≥ 200,000 rows/s',
  csv.value >= 200_000,
  `${ratio(csv, csvBase, ['direct (text differing from the baseline)', 'baseline'])} the baseline (every point made, then formatted: ${csvBase.value.toFixed(0)} rows/s); heap grew at most ${(peak / 1e6).toFixed(0)} MB while streaming (a month at a time)`,
);

console.log(
  `\nsummary (${keywords} keywords × ${days} days × ${domains.length} domains = ${points} points; ${machineNote()}):`,
);
for (const line of goals) console.log(`  ${line}`);
await es.close();
rm.close();
rmSync(dir, { recursive: true, force: true });
