import { Readable } from 'node:stream';
import type { HistoryPoint } from '../../../../contracts/monitors.js';
import { DEFAULT_CTR_CURVE } from '../../../../contracts/monitors.js';
import type { MonitorDoc } from '../../../../projections/monitors/monitors.js';
import type { Range, RankHistoryQueries } from '../../../../projections/rankHistory/queries.js';

/** What the history, visibility and changes routes answer, built from the rank-history queries. */

export const CSV_HEADER = 'keyword,domain,checked_at,status,position,url,failure,job_id\n';

const csvField = (v: string | number | null) => {
  if (v === null) return '';
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

export const csvRow = (p: HistoryPoint) =>
  `${csvField(p.keyword)},${csvField(p.domain)},${p.checked_at},${p.status},${p.position ?? ''},${csvField(p.url)},${csvField(p.failure)},${p.job_id}\n`;

/** The whole history as CSV text, a month of points at a time (memory stays bounded by one month). */
export const historyCsv = (points: Iterable<HistoryPoint[]>) =>
  Readable.from(
    (function* () {
      yield CSV_HEADER;
      for (const batch of points) {
        let chunk = '';
        for (const p of batch) {
          chunk += csvRow(p);
          if (chunk.length > 64 * 1024) {
            yield chunk;
            chunk = '';
          }
        }
        if (chunk) yield chunk;
      }
    })(),
    { objectMode: false },
  );

/** The same points as the JSON body `{monitor_id, points}`, streamed a month at a time. */
export const historyJson = (monitorId: string, points: Iterable<HistoryPoint[]>) =>
  Readable.from(
    (function* () {
      yield `{"monitor_id":${JSON.stringify(monitorId)},"points":[`;
      let first = true;
      for (const batch of points) {
        let chunk = '';
        for (const p of batch) {
          chunk += (first ? '' : ',') + JSON.stringify(p);
          first = false;
        }
        if (chunk) yield chunk;
      }
      yield ']}';
    })(),
    { objectMode: false },
  );

const round = (n: number, digits = 4) => Math.round(n * 10 ** digits) / 10 ** digits;

export const visibilityOf = (ranks: RankHistoryQueries, doc: MonitorDoc, range: Range) => {
  const { byDomain, keywordsOfDay } = ranks.visibility(doc.monitorId, range, doc.ctrCurve ?? DEFAULT_CTR_CURVE);
  // the monitor's domains first, in its order, then any it tracked before
  const domains = [...doc.domains, ...[...byDomain.keys()].filter((d) => !doc.domains.includes(d)).sort()];
  const days = [...keywordsOfDay.keys()].sort();
  return {
    monitor_id: doc.monitorId,
    domains: domains
      .filter((d) => byDomain.has(d) || doc.domains.includes(d))
      .map((domain) => ({
        domain,
        days: days.flatMap((date) => {
          const a = byDomain.get(domain)?.get(date);
          const keywords = keywordsOfDay.get(date) ?? 0;
          if (!a) return [];
          return [
            {
              date,
              keywords,
              average_position: a.ranked ? round(a.sumPosition / a.ranked, 2) : null,
              ranked: a.ranked,
              top3: a.top3,
              top10: a.top10,
              top100: a.top100,
              share_of_voice: keywords ? round(a.ctr / keywords) : 0,
              ai_overview_citations: a.aio,
            },
          ];
        }),
      })),
  };
};

export const changesOf = (ranks: RankHistoryQueries, doc: MonitorDoc, range: Range, minMove: number) => {
  const changes = ranks
    .changes(doc.monitorId, range, () => doc.depth)
    .filter((c) => c.kind !== 'moved' || Math.abs((c.to_position ?? 0) - (c.from_position ?? 0)) >= minMove);
  return { monitor_id: doc.monitorId, changes, best: ranks.best(doc.monitorId) };
};
