import { DEFAULT_CTR_CURVE } from '../../contracts/monitors.js';
import type { DocReader, Projection } from '../projection.js';
import { featureBits, keywordKey } from './rankHistory.js';

/**
 * Rank days (docs/rank-tracking.md#events-and-read-models): what visibility is made of, by UTC day. One document per monitor,
 * UTC day and sixteenth of the keywords (by the first hex digit of the keyword's key), holding each keyword's
 * successful checks of the day in time order, reduced to what visibility reads: the time and, per domain, the
 * position and whether an AI Overview cites it. Failed checks are not here (they are no keyword of the day).
 * Visibility over 90 days reads 90 × 16 small documents instead of every keyword's months of history (run ids, job
 * ids, URLs and all), and stays exact for any range, a day cut in two included (every check of the day is kept).
 */
export interface RankDayDoc {
  /** UTC day number (ms ÷ 86,400,000) */
  day: number;
  /** the domains the checks refer to by index */
  d: string[];
  /**
   * the keys of the day's keywords (keywordKey, 16 hex digits each) end to end, sorted: the order the history's
   * documents are read in
   */
  k: string;
  /** for each key of `k`, how many successful checks of the day it has */
  n: number[];
  /**
   * the checks, key after key, each key's oldest first, flat: per check the ms into the day, then per domain of `d`
   * the position × 2, + 1 if an AI Overview cites the domain (position 0: not ranked), + `PIXELS` when the search
   * was measured in pixels and + `ABOVE_FOLD` when the domain's best result showed on the first screen; or -1: the
   * domain not measured
   */
  c: number[];
}

export const DAY_MS = 86_400_000;
/** ai_overview_citation's bit (RANK_FEATURES order) */
const AIO_BIT = 1;
/** above positions × 2 (at most 201): measured in pixels, and above the fold (docs/rank-tracking.md) */
const PIXELS = 1024;
const ABOVE_FOLD = 512;
const POSITION_MASK = ABOVE_FOLD - 1;
const KEY_LENGTH = 16;
const dateOf = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);
export const rankDayId = (monitorId: string, day: number, key: string) => `${monitorId}|${dateOf(day)}|${key[0]}`;

const indexIn = (list: string[], value: string): [string[], number] => {
  const i = list.indexOf(value);
  return i >= 0 ? [list, i] : [[...list, value], list.length];
};

export const rankDaysProjection: Projection<RankDayDoc> = {
  name: 'rankDays',
  idOf: (e) =>
    e.type === 'MonitorKeywordChecked' && e.data.ok
      ? rankDayId(e.data.monitorId, Math.floor(Date.parse(e.data.checkedAt) / DAY_MS), keywordKey(e.data.keyword))
      : undefined,
  evolve(doc, e) {
    if (e.type !== 'MonitorKeywordChecked' || !e.data.ok) return doc ?? null;
    const t = Date.parse(e.data.checkedAt);
    const day = Math.floor(t / DAY_MS);
    const before = doc?.d ?? [];
    let d = before;
    const check = [t - day * DAY_MS];
    for (const r of e.data.ranks) {
      let di: number;
      [d, di] = indexIn(d, r.domain);
      check[di + 1] =
        (r.position ?? 0) * 2 +
        (featureBits(r.features) & AIO_BIT ? 1 : 0) +
        (r.aboveTheFold === undefined ? 0 : PIXELS + (r.aboveTheFold ? ABOVE_FOLD : 0));
    }
    for (let i = 1; i <= d.length; i++) if (check[i] === undefined) check[i] = -1;
    const stride = 1 + d.length;
    // a domain new to the day: every check so far gets its -1
    const c = d === before ? (doc?.c ?? []) : widened(doc?.c ?? [], 1 + before.length, stride);
    const key = keywordKey(e.data.keyword);
    const k = doc?.k ?? '';
    const n = doc?.n ?? [];
    // the keyword's place among the day's keys (sorted)
    let lo = 0;
    let hi = n.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (k.slice(mid * KEY_LENGTH, (mid + 1) * KEY_LENGTH) < key) lo = mid + 1;
      else hi = mid;
    }
    let off = 0;
    for (let i = 0; i < lo; i++) off += n[i];
    off *= stride;
    if (k.slice(lo * KEY_LENGTH, (lo + 1) * KEY_LENGTH) !== key) {
      const at = lo * KEY_LENGTH;
      return {
        day,
        d,
        k: k.slice(0, at) + key + k.slice(at),
        n: n.toSpliced(lo, 0, 1),
        c: c.toSpliced(off, 0, ...check),
      };
    }
    // in time order, after every check not later (the order the history keeps them in)
    let at = n[lo];
    while (at > 0 && c[off + (at - 1) * stride] > check[0]) at--;
    return { day, d, k, n: n.with(lo, n[lo] + 1), c: c.toSpliced(off + at * stride, 0, ...check) };
  },
};

/** checks of `from` numbers each made `to` long, the new places -1 */
const widened = (c: number[], from: number, to: number) => {
  const out: number[] = [];
  for (let i = 0; i < c.length; i += from) {
    for (let j = 0; j < from; j++) out.push(c[i + j]);
    for (let j = from; j < to; j++) out.push(-1);
  }
  return out;
};

export interface VisibilityAccumulator {
  keywords: number;
  sumPosition: number;
  ranked: number;
  top3: number;
  top10: number;
  top100: number;
  ctr: number;
  aio: number;
  /** keywords measured in pixels, and those whose best result showed on the first screen */
  measured: number;
  aboveFold: number;
}

/** a domain's day before any keyword is counted in it */
export const emptyAccumulator = (): VisibilityAccumulator => ({
  keywords: 0,
  sumPosition: 0,
  ranked: 0,
  top3: 0,
  top10: 0,
  top100: 0,
  ctr: 0,
  aio: 0,
  measured: 0,
  aboveFold: 0,
});

export interface Range {
  /** ms, inclusive */
  from: number;
  /** ms, inclusive */
  to: number;
}

/** days read at once: whole days only (a page's last day is read again with the next page) */
const PAGE = 2048;
const LAST_DATE = 253_402_300_799_999;

export const rankDayQueries = (docs: DocReader) => {
  const view = rankDaysProjection.name;
  /** the monitor's day documents whose day meets the range, in id order (by day, then keyword key), a page at a time */
  function* dayDocs(monitorId: string, range: Range): Generator<RankDayDoc[]> {
    let after = range.from > 0 ? `${monitorId}|${dateOf(Math.floor(range.from / DAY_MS))}|` : `${monitorId}|`;
    const before = `${monitorId}|${range.to < LAST_DATE ? dateOf(Math.floor(range.to / DAY_MS)) : '9999-12-31'}|~`;
    for (;;) {
      const page = docs.listBetween<RankDayDoc>(view, after, before, PAGE);
      if (page.length < PAGE) {
        if (page.length) yield page;
        return;
      }
      const lastDay = page[page.length - 1].day;
      yield page.filter((doc) => doc.day !== lastDay);
      after = `${monitorId}|${dateOf(lastDay)}|`;
    }
  }

  /**
   * Per domain per UTC day: each keyword counts once a day, with its last successful search of that day within the
   * range; a failed search is no position and no keyword of the day. Share of voice: Σ CTR(position) ÷ keywords
   * searched that day, summed in the same order as from the history (by keyword key), so the figures are the same.
   */
  const visibility = (monitorId: string, range: Range, ctrCurve: readonly number[] = DEFAULT_CTR_CURVE) => {
    const byDomain = new Map<string, Map<string, VisibilityAccumulator>>();
    const keywordsOfDay = new Map<string, number>();
    for (const page of dayDocs(monitorId, range)) {
      for (const doc of page) {
        const start = doc.day * DAY_MS;
        const date = dateOf(doc.day);
        const accs: Array<VisibilityAccumulator | undefined> = [];
        const accOf = (di: number) => {
          let a = accs[di];
          if (a) return a;
          const domain = doc.d[di];
          const days = byDomain.get(domain) ?? new Map<string, VisibilityAccumulator>();
          byDomain.set(domain, days);
          a = days.get(date);
          if (!a) {
            a = emptyAccumulator();
            days.set(date, a);
          }
          accs[di] = a;
          return a;
        };
        let counted = 0;
        const { c, n } = doc;
        const stride = 1 + doc.d.length;
        let off = 0;
        for (const count of n) {
          // the key's last successful check of the day within the range
          let found = -1;
          for (let i = off + (count - 1) * stride; i >= off; i -= stride) {
            const at = start + c[i];
            if (at <= range.to && at >= range.from) {
              found = i;
              break;
            }
          }
          off += count * stride;
          if (found < 0) continue;
          counted++;
          for (let di = 0; di + 1 < stride; di++) {
            const v = c[found + 1 + di];
            if (v < 0) continue;
            const a = accOf(di);
            const pos = (v & POSITION_MASK) >> 1;
            if (pos > 0) {
              a.ranked++;
              a.sumPosition += pos;
              if (pos <= 3) a.top3++;
              if (pos <= 10) a.top10++;
              if (pos <= 100) a.top100++;
              if (pos <= 20) a.ctr += ctrCurve[pos - 1] ?? 0;
            }
            if (v & 1) a.aio++;
            if (v & PIXELS) a.measured++;
            if (v & ABOVE_FOLD) a.aboveFold++;
          }
        }
        if (counted) keywordsOfDay.set(date, (keywordsOfDay.get(date) ?? 0) + counted);
      }
    }
    return { byDomain, keywordsOfDay };
  };

  return { visibility };
};
