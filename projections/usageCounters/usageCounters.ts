import type { Projection } from '../projection.js';

export interface UsageCounterDoc {
  keyId: string;
  month: string;
  reserved: number;
  released: number;
  used: number;
}

export const usageCounterId = (keyId: string, month: string) => `${keyId}:${month}`;

export const usageCountersProjection: Projection<UsageCounterDoc> = {
  name: 'usageCounters',
  idOf: (e) =>
    e.type === 'QuotaReserved' || e.type === 'QuotaReleased' ? usageCounterId(e.data.keyId, e.data.month) : undefined,
  evolve(doc, e) {
    if (e.type !== 'QuotaReserved' && e.type !== 'QuotaReleased') return doc ?? null;
    const base = doc ?? { keyId: e.data.keyId, month: e.data.month, reserved: 0, released: 0, used: 0 };
    const reserved = base.reserved + (e.type === 'QuotaReserved' ? 1 : 0);
    const released = base.released + (e.type === 'QuotaReleased' ? 1 : 0);
    return { ...base, reserved, released, used: reserved - released };
  },
};
