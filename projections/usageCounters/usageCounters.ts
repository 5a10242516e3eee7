import type { Projection } from '../projection.js';

export interface UsageCounterDoc {
  keyId: string;
  month: string;
  reserved: number;
  released: number;
  used: number;
  /**
   * searches reserved per UTC minute ("YYYY-MM-DDTHH:MM") over the last hour of this month's reservations, for the
   * compat `/account`'s `last_hour_searches` and `this_hour_searches`; older minutes are dropped as events arrive
   */
  minutes?: Record<string, number>;
}

export const usageCounterId = (keyId: string, month: string) => `${keyId}:${month}`;

/** "YYYY-MM-DDTHH:MM" of an ISO time: minute buckets sort as strings. */
export const minuteOf = (iso: string) => iso.slice(0, 16);

const HOUR_MS = 3_600_000;

const recentMinutes = (minutes: Record<string, number> | undefined, at: string): Record<string, number> => {
  const oldest = minuteOf(new Date(Date.parse(at) - HOUR_MS).toISOString());
  const kept: Record<string, number> = {};
  for (const [m, n] of Object.entries(minutes ?? {})) if (m >= oldest) kept[m] = n;
  return kept;
};

export const usageCountersProjection: Projection<UsageCounterDoc> = {
  name: 'usageCounters',
  idOf: (e) =>
    e.type === 'QuotaReserved' || e.type === 'QuotaReleased' ? usageCounterId(e.data.keyId, e.data.month) : undefined,
  evolve(doc, e) {
    if (e.type !== 'QuotaReserved' && e.type !== 'QuotaReleased') return doc ?? null;
    const base = doc ?? { keyId: e.data.keyId, month: e.data.month, reserved: 0, released: 0, used: 0 };
    const reserved = base.reserved + (e.type === 'QuotaReserved' ? 1 : 0);
    const released = base.released + (e.type === 'QuotaReleased' ? 1 : 0);
    let minutes = base.minutes;
    if (e.type === 'QuotaReserved' && !Number.isNaN(Date.parse(e.data.reservedAt))) {
      minutes = recentMinutes(base.minutes, e.data.reservedAt);
      const m = minuteOf(e.data.reservedAt);
      minutes[m] = (minutes[m] ?? 0) + 1;
    }
    return { ...base, reserved, released, used: reserved - released, ...(minutes ? { minutes } : {}) };
  },
};
