import type { DocReader } from '../projection.js';
import { minuteOf, type UsageCounterDoc, usageCounterId, usageCountersProjection } from './usageCounters.js';

export const usageCountersQueries = (docs: DocReader) => {
  const of = (keyId: string, month: string) =>
    docs.get<UsageCounterDoc>(usageCountersProjection.name, usageCounterId(keyId, month));
  return {
    of,
    /** searches counted against the key's quota in `month` (yyyymm): reserved − released */
    used: (keyId: string, month: string) => of(keyId, month)?.used ?? 0,
    /**
     * searches submitted (reserved, cache hits excluded) in the 60 minutes before `now` and in `now`'s clock hour;
     * `months` are the usage months those minutes can fall in (this one, and the last one just after a month starts)
     */
    recent: (keyId: string, months: readonly string[], now: Date) => {
      const from = minuteOf(new Date(now.getTime() - 3_600_000).toISOString());
      const hour = now.toISOString().slice(0, 13);
      let lastHour = 0;
      let thisHour = 0;
      for (const month of new Set(months)) {
        for (const [m, n] of Object.entries(of(keyId, month)?.minutes ?? {})) {
          if (m > from) lastHour += n;
          if (m.startsWith(hour)) thisHour += n;
        }
      }
      return { lastHour, thisHour };
    },
  };
};
