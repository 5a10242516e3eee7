import type { DocReader } from '../projection.js';
import { type HourlyOutcomesDoc, hourlyOutcomesProjection, hourOf } from './hourlyOutcomes.js';
import { type KeyDailyDoc, keyDailyProjection } from './keyDaily.js';

export const dashboardQueries = (docs: DocReader) => ({
  /** the key's last `days` UTC days up to `now`, every day present (zeros where it made no search) */
  keyDays(keyId: string, days: number, now: Date): KeyDailyDoc[] {
    const byDay = new Map(
      docs.listByLookup<KeyDailyDoc>(keyDailyProjection.name, keyId, { last: days }).map((d) => [d.day, d]),
    );
    return Array.from({ length: days }, (_, i) => {
      const day = new Date(now.getTime() - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10);
      return byDay.get(day) ?? { keyId, day, searches: 0, cached: 0, reserved: 0, released: 0 };
    });
  },
  /** the service's last `hours` UTC hours up to `now`, every hour present */
  hours(hours: number, now: Date): HourlyOutcomesDoc[] {
    const before = hourOf(new Date(now.getTime() - hours * 3_600_000).toISOString());
    const byHour = new Map(
      docs.listBetween<HourlyOutcomesDoc>(hourlyOutcomesProjection.name, before, '~', hours).map((d) => [d.hour, d]),
    );
    return Array.from({ length: hours }, (_, i) => {
      const hour = hourOf(new Date(now.getTime() - (hours - 1 - i) * 3_600_000).toISOString());
      return byHour.get(hour) ?? { hour, submitted: 0, cached: 0, done: 0, partial: 0, failed: {} };
    });
  },
});
