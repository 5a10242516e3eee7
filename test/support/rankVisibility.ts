import { DEFAULT_CTR_CURVE } from '../../contracts/monitors.js';
import type { DocReader } from '../../projections/projection.js';
import type { Range, VisibilityAccumulator } from '../../projections/rankHistory/queries.js';
import { emptyAccumulator } from '../../projections/rankHistory/rankDays.js';
import {
  monthOf,
  type RankHistoryDoc,
  rankHistoryProjection,
  type StoredCheck,
} from '../../projections/rankHistory/rankHistory.js';

/**
 * Visibility computed from the history itself (every keyword's month documents), as the route computed it before the
 * day documents (projections/rankHistory/rankDays.ts): the reference the tests compare the day documents' answer with,
 * and the baseline of test/bench/ranks.ts. Same result shape as `ranks.visibility`.
 */
const DAY_MS = 86_400_000;
const AIO_BIT = 1;

export const visibilityFromHistory = (
  docs: DocReader,
  monitorId: string,
  range: Range,
  ctrCurve: readonly number[] = DEFAULT_CTR_CURVE,
) => {
  const view = rankHistoryProjection.name;
  const fromMonth = range.from > 0 ? monthOf(range.from) : '0000-00';
  const toMonth = range.to < 8e15 ? monthOf(range.to) : '9999-12';
  const byDomainDay = new Map<string, Map<number, VisibilityAccumulator>>();
  const keywordsOfDayN = new Map<number, number>();
  // a month at a time, as the route read them
  const months: string[] = [];
  for (let after = `${monitorId}|${fromMonth}`; ; ) {
    const [doc] = docs.listBetween<RankHistoryDoc>(view, after, `${monitorId}|${toMonth}|~`, 1);
    const month = doc?.c[0] ? monthOf(doc.c[0][0]) : undefined;
    if (!month) break;
    months.push(month);
    after = `${monitorId}|${month}|~`;
  }
  const monthDocs = (month: string) =>
    docs.listBetween<RankHistoryDoc>(view, `${monitorId}|${month}|`, `${monitorId}|${month}|~`, 1_000_000);
  for (const month of months) {
    for (const doc of monthDocs(month)) {
      // the last successful check of each day (checks are in time order)
      const lastOfDay = new Map<number, StoredCheck>();
      for (const c of doc.c) {
        if (c[3] !== '' || c[0] < range.from || c[0] > range.to) continue;
        lastOfDay.set(Math.floor(c[0] / DAY_MS), c);
      }
      for (const [day, c] of lastOfDay) {
        keywordsOfDayN.set(day, (keywordsOfDayN.get(day) ?? 0) + 1);
        for (const r of c[4]) {
          const [di, pos, , bits] = r;
          const domain = doc.d[di];
          const days = byDomainDay.get(domain) ?? new Map<number, VisibilityAccumulator>();
          byDomainDay.set(domain, days);
          let a = days.get(day);
          if (!a) {
            a = emptyAccumulator();
            days.set(day, a);
          }
          if (pos > 0) {
            a.ranked++;
            a.sumPosition += pos;
            if (pos <= 3) a.top3++;
            if (pos <= 10) a.top10++;
            if (pos <= 100) a.top100++;
            if (pos <= 20) a.ctr += ctrCurve[pos - 1] ?? 0;
          }
          if (bits & AIO_BIT) a.aio++;
          if (r.length > 4) a.measured++;
          if (r[5] === 1) a.aboveFold++;
        }
      }
    }
  }
  const dateOf = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);
  const byDomain = new Map<string, Map<string, VisibilityAccumulator>>();
  for (const [domain, days] of byDomainDay) byDomain.set(domain, new Map([...days].map(([d, a]) => [dateOf(d), a])));
  const keywordsOfDay = new Map([...keywordsOfDayN].map(([day, n]) => [dateOf(day), n]));
  return { byDomain, keywordsOfDay };
};
