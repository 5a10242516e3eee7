/**
 * Rank tracking's read model (docs/rank-tracking.md), made through the real projection from events:
 *   npx tsx test/bench/ranks.ts [keywords=1000] [days=365] [domains=3]
 * A monitor of `keywords` keywords × `domains` domains with a daily run for `days` days: MonitorKeywordChecked events
 * appended to an embedded event store, then `projections rebuild` (points/s), the read model's bytes per point, one
 * keyword's year for one domain (p50/p99 over 200 reads), visibility over the last 90 days, and the whole history as
 * CSV (rows/s, heap high-water mark). Prints figures, asserts nothing. No baseline is run: see docs/rank-tracking.md.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allProjections, readModelQueries } from '../../projections/index.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';
import { csvRow } from '../../services/api/routes/v1/monitorReads.js';
import { rebuildReadModels } from '../../services/projector/projector.js';

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

const r0 = performance.now();
const rebuilt = await rebuildReadModels(es, rm, allProjections);
const rebuildS = (performance.now() - r0) / 1000;
console.log(
  `projections rebuild: ${rebuilt.events} events, ${(points / rebuildS).toFixed(0)} points/s (${rebuildS.toFixed(1)} s)`,
);

rm.compact();
const docsBytes = rm
  .dump()
  .filter((d) => d.view === 'rankHistory' || d.view === 'rankBest')
  .reduce((n, d) => n + d.doc.length + d.id.length + d.view.length, 0);
console.log(
  `read model: ${(docsBytes / points).toFixed(1)} bytes of documents per point; read.db ${(statSync(join(dir, 'read.db')).size / points).toFixed(1)} bytes per point (the whole file)`,
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
console.log(`one keyword's year for one domain: p50 ${times[100].toFixed(2)} ms, p99 ${times[197].toFixed(2)} ms`);

const v0 = performance.now();
const vis = q.ranks.visibility(monitorId, { from: start + (days - 90) * 86_400_000, to: year.to });
console.log(
  `visibility, whole monitor, 90 days: ${(performance.now() - v0).toFixed(0)} ms (${vis.keywordsOfDay.size} days)`,
);

let peak = process.memoryUsage().heapUsed;
const c0 = performance.now();
let rows = 0;
let bytes = 0;
for (const batch of q.ranks.points(monitorId, year)) {
  for (const p of batch) {
    bytes += csvRow(p).length;
    rows++;
  }
  peak = Math.max(peak, process.memoryUsage().heapUsed);
}
const csvS = (performance.now() - c0) / 1000;
console.log(
  `CSV of the whole history: ${rows} rows, ${(rows / csvS).toFixed(0)} rows/s, ${(bytes / 1e6).toFixed(0)} MB, heap high-water ${(peak / 1e6).toFixed(0)} MB`,
);
await es.close();
rm.close();
rmSync(dir, { recursive: true, force: true });
