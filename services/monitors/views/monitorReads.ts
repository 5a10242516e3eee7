import { Readable } from 'node:stream';
import type { HistoryPoint } from '../../../contracts/monitors.js';
import { DEFAULT_CTR_CURVE } from '../../../contracts/monitors.js';
import type { MonitorDoc } from '../../../projections/monitors/monitors.js';
import type { Range, RankHistoryQueries } from '../../../projections/rankHistory/queries.js';
import type { RankHistoryDoc, StoredCheck, StoredRank } from '../../../projections/rankHistory/rankHistory.js';
import { csvCell } from '../../export/csv.js';

/** What the history, visibility and changes routes answer, built from the rank-history queries. */

/**
 * The fold's two columns come last, after the columns the CSV had before them, so a reader of the older file reads this
 * one (docs/rank-tracking.md#pixel-positions); both are empty where the search was not measured in pixels.
 */
export const CSV_HEADER =
  'keyword,domain,checked_at,status,position,url,failure,job_id,pixels_from_top,above_the_fold\n';

/** cells are written by the exports' one writer, which escapes formulas (docs/security.md#exports) */
const csvField = (v: string | number | null) => csvCell(v);

/** failure reasons repeat (a handful of kinds): each is escaped once */
const failureCells = new Map<string, string>();
const failureCell = (failure: string) => {
  let cell = failureCells.get(failure);
  if (cell === undefined) {
    cell = csvCell(failure);
    if (failureCells.size < 1_000) failureCells.set(failure, cell);
  }
  return cell;
};

/** the fold's cells of a point: empty when it was not measured, and `pixels_from_top` empty off the first page */
const foldCells = (p: HistoryPoint) =>
  p.above_the_fold === undefined ? ',' : `${p.pixels_from_top ?? ''},${p.above_the_fold}`;

export const csvRow = (p: HistoryPoint) =>
  `${csvField(p.keyword)},${csvField(p.domain)},${p.checked_at},${p.status},${p.position ?? ''},${csvField(p.url)},${csvField(p.failure)},${p.job_id},${foldCells(p)}\n`;

/** the same cells from a stored rank: measured ranks carry two more fields (`StoredRank`), a failed search none */
const storedFoldCells = (r: StoredRank, failed: boolean) => {
  if (failed || r.length !== 6) return ',';
  const [, , , , px, above] = r;
  return `${px < 0 ? '' : px},${above === 1}`;
};

/** a document's fields as CSV, escaped once per document rather than once per row */
interface CsvFields {
  keyword: string;
  domains: string[];
  urls: string[];
}

/**
 * The CSV rows of stored checks, straight from the read model (the same text as `csvRow` of their points, without
 * making the points): a month of checks at a time, in chunks of about 64 kB.
 */
export function* csvChunks(months: Iterable<Array<[RankHistoryDoc, StoredCheck]>>, domain?: string) {
  const fields = new WeakMap<RankHistoryDoc, CsvFields>();
  const fieldsOf = (doc: RankHistoryDoc) => {
    let f = fields.get(doc);
    if (!f) {
      f = { keyword: csvField(doc.k), domains: doc.d.map(csvField), urls: doc.u.map(csvField) };
      fields.set(doc, f);
    }
    return f;
  };
  for (const checks of months) {
    let chunk = '';
    for (const [doc, c] of checks) {
      const f = fieldsOf(doc);
      const at = new Date(c[0]).toISOString();
      const failure = c[3];
      const job = `,${c[2]},`;
      for (const r of c[4]) {
        const [di, pos, ui] = r;
        if (domain !== undefined && doc.d[di] !== domain) continue;
        const head = `${f.keyword},${f.domains[di]},${at},`;
        const tail = `${job}${storedFoldCells(r, failure !== '')}\n`;
        if (failure !== '') chunk += `${head}failed,,,${failureCell(failure)}${tail}`;
        else if (pos > 0) chunk += `${head}ranked,${pos},${ui < 0 ? '' : f.urls[ui]},${tail}`;
        else chunk += `${head}not_ranked,,${ui < 0 ? '' : f.urls[ui]},${tail}`;
      }
      if (chunk.length > 64 * 1024) {
        yield chunk;
        chunk = '';
      }
    }
    if (chunk) yield chunk;
  }
}

/** The whole history as CSV, streamed from the stored checks (see csvChunks). */
export const historyCsvOf = (months: Iterable<Array<[RankHistoryDoc, StoredCheck]>>, domain?: string) =>
  Readable.from(
    (function* () {
      yield CSV_HEADER;
      yield* csvChunks(months, domain);
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
              // a monitor with pixel positions: the share of the day's measured keywords seen on the first screen
              ...(a.measured
                ? { above_the_fold: a.aboveFold, above_the_fold_share: round(a.aboveFold / a.measured) }
                : {}),
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
