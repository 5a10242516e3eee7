import type { Change, HistoryPoint } from '../../contracts/monitors.js';
import type { DomainState } from '../../domain/monitor/alerts.js';
import type { DocReader } from '../projection.js';
import { type Range, rankDayQueries } from './rankDays.js';
import {
  featuresOf,
  historyId,
  monthOf,
  type RankBestDoc,
  type RankHistoryDoc,
  rankBestProjection,
  rankHistoryProjection,
  type StoredCheck,
} from './rankHistory.js';

export type { Range, VisibilityAccumulator } from './rankDays.js';

const MIN_MONTH = '0000-00';

/** One check of one keyword, flattened per domain into history points. */
const pointsOf = (doc: RankHistoryDoc, c: StoredCheck, domain?: string): HistoryPoint[] => {
  const out: HistoryPoint[] = [];
  const checkedAt = new Date(c[0]).toISOString();
  for (const r of c[4]) {
    const [di, pos, ui, bits] = r;
    const d = doc.d[di];
    if (domain !== undefined && d !== domain) continue;
    const failed = c[3] !== '';
    const px = r.length > 4 ? pixelsOf(r as [number, number, number, number, number, number]) : undefined;
    out.push({
      keyword: doc.k,
      domain: d,
      checked_at: checkedAt,
      run_id: c[1],
      job_id: c[2],
      status: failed ? 'failed' : pos > 0 ? 'ranked' : 'not_ranked',
      position: failed || pos === 0 ? null : pos,
      url: failed || ui < 0 ? null : doc.u[ui],
      failure: failed ? c[3] : null,
      features: failed ? [] : featuresOf(bits),
      ...(px && !failed ? { pixels_from_top: px.pixelsFromTop, above_the_fold: px.aboveTheFold } : {}),
    });
  }
  return out;
};

/** a rank measured in pixels: how far down its best result lay (null: not on the first page), on the first screen */
const pixelsOf = (r: [number, number, number, number, number, number]) => ({
  pixelsFromTop: r[4] < 0 ? null : r[4],
  aboveTheFold: r[5] === 1,
});

/** the successful state of each domain in a check: domain → [position (0: not ranked), url, feature bits] */
const stateOf = (doc: RankHistoryDoc, c: StoredCheck) => {
  const m = new Map<string, [number, string | null, number]>();
  for (const [di, pos, ui, bits] of c[4]) m.set(doc.d[di], [pos, ui < 0 ? null : doc.u[ui], bits]);
  return m;
};

/**
 * What changed for each domain between two consecutive successful searches of a keyword (docs/rank-tracking.md):
 * entered or left the top 10 and the top `depth` (100 by default), moved (any distance: callers filter by min_move),
 * another URL of the domain ranks, a feature gained or lost. Pure, for the changes query and for alerts on a run.
 */
export const changesBetween = (
  keyword: string,
  before: Map<string, [number, string | null, number]>,
  after: Map<string, [number, string | null, number]>,
  at: string,
  runId: string,
  depth = 100,
): Change[] => {
  const out: Change[] = [];
  for (const [domain, [to, toUrl, toBits]] of after) {
    const was = before.get(domain);
    if (!was) continue;
    const [from, fromUrl, fromBits] = was;
    const base = {
      keyword,
      domain,
      from_position: from || null,
      to_position: to || null,
      from_url: fromUrl,
      to_url: toUrl,
      at,
      run_id: runId,
    };
    for (const top of depth > 10 ? [10, depth] : [depth]) {
      const inFrom = from > 0 && from <= top;
      const inTo = to > 0 && to <= top;
      if (!inFrom && inTo) out.push({ ...base, kind: 'entered', top });
      if (inFrom && !inTo) out.push({ ...base, kind: 'left', top });
    }
    if (from > 0 && to > 0 && from !== to) out.push({ ...base, kind: 'moved' });
    if (from > 0 && to > 0 && fromUrl !== toUrl) out.push({ ...base, kind: 'url_changed' });
    const gained = toBits & ~fromBits;
    const lost = fromBits & ~toBits;
    for (const f of featuresOf(gained)) out.push({ ...base, kind: 'feature_gained', feature: f });
    for (const f of featuresOf(lost)) out.push({ ...base, kind: 'feature_lost', feature: f });
  }
  return out;
};

export const rankHistoryQueries = (docs: DocReader) => {
  const view = rankHistoryProjection.name;
  // visibility reads the day documents (rankDays.ts), not the history's
  const { visibility } = rankDayQueries(docs);
  /** the monitor's documents of one month, every keyword, by keyword key */
  const monthDocs = (monitorId: string, month: string) =>
    docs.listBetween<RankHistoryDoc>(view, `${monitorId}|${month}|`, `${monitorId}|${month}|~`, 1_000_000);
  /** the months the monitor has history in, oldest first, within [fromMonth, toMonth] */
  const months = (monitorId: string, fromMonth: string, toMonth: string): string[] => {
    const out: string[] = [];
    let after = `${monitorId}|${fromMonth}`;
    for (;;) {
      const [doc] = docs.listBetween<RankHistoryDoc>(view, after, `${monitorId}|${toMonth}|~`, 1);
      if (!doc) return out;
      const first = doc.c[0];
      const month = first ? monthOf(first[0]) : undefined;
      if (!month) return out;
      out.push(month);
      after = `${monitorId}|${month}|~`;
    }
  };

  /** a month at a time, the checks in the range in time order (then by keyword): what points and CSV are made of */
  function* monthChecks(
    monitorId: string,
    range: Range,
    keyword?: string,
  ): Generator<Array<[RankHistoryDoc, StoredCheck]>> {
    const fromMonth = range.from > 0 ? monthOf(range.from) : MIN_MONTH;
    const toMonth = range.to < 8e15 ? monthOf(range.to) : '9999-12';
    for (const month of months(monitorId, fromMonth, toMonth)) {
      const list =
        keyword !== undefined
          ? [docs.get<RankHistoryDoc>(view, historyId(monitorId, month, keyword))].filter(
              (d): d is RankHistoryDoc => d !== undefined,
            )
          : monthDocs(monitorId, month);
      const checks: Array<[RankHistoryDoc, StoredCheck]> = [];
      for (const doc of list) for (const c of doc.c) if (c[0] >= range.from && c[0] <= range.to) checks.push([doc, c]);
      checks.sort((a, b) => a[1][0] - b[1][0] || (a[0].k < b[0].k ? -1 : a[0].k > b[0].k ? 1 : 0));
      if (checks.length) yield checks;
    }
  }

  /** history points in time order, a month at a time (bounded memory for a whole year's CSV) */
  function* points(
    monitorId: string,
    range: Range,
    filter: { keyword?: string; domain?: string } = {},
  ): Generator<HistoryPoint[]> {
    for (const checks of monthChecks(monitorId, range, filter.keyword)) {
      const batch: HistoryPoint[] = [];
      for (const [doc, c] of checks) for (const p of pointsOf(doc, c, filter.domain)) batch.push(p);
      if (batch.length) yield batch;
    }
  }

  /**
   * Changes between consecutive successful searches of each keyword whose later search falls in the range (a failed
   * search is skipped over, never a change), oldest first. The history before the range is read for each keyword's
   * search before it.
   */
  const changes = (monitorId: string, range: Range, depthOf: (at: number) => number = () => 100): Change[] => {
    const toMonth = range.to < 8e15 ? monthOf(range.to) : '9999-12';
    const last = new Map<string, [RankHistoryDoc, StoredCheck]>();
    const out: Change[] = [];
    for (const month of months(monitorId, MIN_MONTH, toMonth)) {
      const checks: Array<[RankHistoryDoc, StoredCheck]> = [];
      for (const doc of monthDocs(monitorId, month)) for (const c of doc.c) if (c[3] === '') checks.push([doc, c]);
      checks.sort((a, b) => a[1][0] - b[1][0]);
      for (const [doc, c] of checks) {
        if (c[0] > range.to) break;
        const prev = last.get(doc.k);
        last.set(doc.k, [doc, c]);
        if (!prev || c[0] < range.from) continue;
        const at = new Date(c[0]).toISOString();
        out.push(...changesBetween(doc.k, stateOf(prev[0], prev[1]), stateOf(doc, c), at, c[1], depthOf(c[0])));
      }
    }
    return out;
  };

  /**
   * Each keyword's latest successful search at or before its `atMs` that is not of run `exceptRunId`, per domain
   * (what an alert compares a run's search with; undefined: none): the monitor's months are listed once, and each
   * keyword's documents read from the newest month back, so a keyword costs the months up to the first that holds one,
   * not its whole history.
   */
  const lastSuccesses = (
    monitorId: string,
    searches: ReadonlyArray<{ keyword: string; atMs: number }>,
    exceptRunId: string,
  ): Array<Map<string, DomainState> | undefined> => {
    if (searches.length === 0) return [];
    const all = months(monitorId, MIN_MONTH, monthOf(Math.max(...searches.map((x) => x.atMs)))).reverse();
    return searches.map(({ keyword, atMs }) => {
      for (const month of all) {
        if (month > monthOf(atMs)) continue;
        const doc = docs.get<RankHistoryDoc>(view, historyId(monitorId, month, keyword));
        for (let i = (doc?.c.length ?? 0) - 1; i >= 0; i--) {
          const c = doc!.c[i]!;
          if (c[0] > atMs || c[3] !== '' || c[1] === exceptRunId) continue;
          return new Map(
            c[4].map((r): [string, DomainState] => [
              doc!.d[r[0]]!,
              {
                position: r[1],
                url: r[2] < 0 ? null : doc!.u[r[2]]!,
                features: featuresOf(r[3]),
                ...(r.length > 4 ? { aboveTheFold: r[5] === 1 } : {}),
              },
            ]),
          );
        }
      }
      return undefined;
    });
  };

  const best = (monitorId: string) =>
    docs
      .listByLookup<RankBestDoc>(rankBestProjection.name, monitorId)
      .flatMap((doc) =>
        Object.entries(doc.b).map(([domain, [position, url, at]]) => ({ keyword: doc.k, domain, position, url, at })),
      );

  return { points, monthChecks, visibility, changes, best, months, lastSuccesses };
};
export type RankHistoryQueries = ReturnType<typeof rankHistoryQueries>;
